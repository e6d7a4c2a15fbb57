#include "pkg/config/decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace berth::config {

std::vector<Decoder::Field> typeMetaFields(Decoder& d, const std::string& kind) {
  return {
      {"apiVersion",
       [&d](const Json& v, const std::string& p) {
         auto s = d.string(v, p);
         if (s && *s != kApiVersion) {
           d.fail(p, "must be \"" + std::string(kApiVersion) + "\", got " + describe(v));
         }
       }},
      {"kind",
       [&d, kind](const Json& v, const std::string& p) {
         auto s = d.string(v, p);
         if (s && *s != kind) {
           d.fail(p, "must be \"" + kind + "\", got " + describe(v));
         }
       }},
  };
}

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string Decoder::error() const {
  if (errors_.size() == 1) return errors_.front();
  std::string out = std::to_string(errors_.size()) + " errors:";
  for (const std::string& e : errors_) out += "\n  " + e;
  return out;
}

void Decoder::fail(const std::string& path, const std::string& problem) {
  if (!failed()) {
    errors_.push_back(path.empty() ? problem : path + ": " + problem);
  }
}

void Decoder::object(const Json& j, const std::string& path, const std::vector<Field>& fields,
                     std::span<const std::string_view> unsupported) {
  if (failed()) {
    return;
  }
  if (!j.is_object()) {
    fail(path, "must be a mapping, got " + describe(j));
    return;
  }
  for (const auto& [key, value] : j.items()) {
    std::string p = child(path, key);
    auto f = std::find_if(fields.begin(), fields.end(),
                          [&key = key](const Field& field) { return field.name == key; });
    isolated([&, &key = key, &value = value] {
      if (f != fields.end()) {
        if (!value.is_null()) {
          f->handler(value, p);
        }
      } else if (std::find(unsupported.begin(), unsupported.end(), key) != unsupported.end()) {
        if (!value.is_null()) {
          fail(p, "not supported by berth");
        }
      } else {
        fail(p, "unknown field");
      }
    });
  }
}

void Decoder::list(const Json& j, const std::string& path, const Handler& each) {
  if (failed()) {
    return;
  }
  if (!j.is_array()) {
    fail(path, "must be a list, got " + describe(j));
    return;
  }
  for (size_t i = 0; i < j.size(); ++i) {
    isolated([&] { each(j[i], index(path, i)); });
  }
}

std::optional<std::string> Decoder::string(const Json& v, const std::string& path) {
  if (failed()) {
    return std::nullopt;
  }
  if (!v.is_string()) {
    fail(path, "must be a string, got " + describe(v));
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<bool> Decoder::boolean(const Json& v, const std::string& path) {
  if (failed()) {
    return std::nullopt;
  }
  if (!v.is_boolean()) {
    fail(path, "must be true or false, got " + describe(v));
    return std::nullopt;
  }
  return v.get<bool>();
}

std::optional<int64_t> Decoder::integer(const Json& v, const std::string& path, int64_t min,
                                        int64_t max, std::string_view type) {
  if (failed()) {
    return std::nullopt;
  }
  bool fits = false;
  int64_t value = 0;
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    fits = u <= static_cast<uint64_t>(max);
    value = fits ? static_cast<int64_t>(u) : 0;
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
    fits = value >= min && value <= max;
  } else {
    fail(path, "must be an integer, got " + describe(v));
    return std::nullopt;
  }
  if (!fits) {
    fail(path, describe(v) + " does not fit in " + std::string(type));
    return std::nullopt;
  }
  return value;
}

std::optional<int32_t> Decoder::int32(const Json& v, const std::string& path) {
  auto i = integer(v, path, std::numeric_limits<int32_t>::min(),
                   std::numeric_limits<int32_t>::max(), "int32");
  if (!i) {
    return std::nullopt;
  }
  return static_cast<int32_t>(*i);
}

std::optional<int64_t> Decoder::int64(const Json& v, const std::string& path) {
  return integer(v, path, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                 "int64");
}

std::optional<double> Decoder::number(const Json& v, const std::string& path) {
  if (failed()) {
    return std::nullopt;
  }
  if (!v.is_number()) {
    fail(path, "must be a number, got " + describe(v));
    return std::nullopt;
  }
  double d = v.get<double>();
  if (!std::isfinite(d)) {
    fail(path, "must be a finite number, got " + describe(v));
    return std::nullopt;
  }
  return d;
}

std::vector<std::string> Decoder::strings(const Json& v, const std::string& path) {
  std::vector<std::string> out;
  list(v, path, [&](const Json& item, const std::string& p) {
    if (auto s = string(item, p)) {
      out.push_back(std::move(*s));
    }
  });
  return out;
}

}  // namespace berth::config
