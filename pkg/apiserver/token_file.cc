#include "pkg/apiserver/token_file.h"

#include <algorithm>

namespace berth::apiserver {
namespace {

using Record = std::vector<std::string>;

// Go's encoding/csv with FieldsPerRecord -1: comma-separated, a field may be quoted (then it may
// hold commas, newlines and "" for a quote); a bare quote in an unquoted field is an error.
util::Result<std::vector<Record>> readCsv(std::string_view text, const std::string& path) {
  std::vector<Record> records;
  size_t line = 1;
  size_t i = 0;
  auto error = [&](const std::string& what) {
    return util::invalidArgument(path + ": parse error on line " + std::to_string(line) + ": " +
                                 what);
  };
  while (i < text.size()) {
    if (text[i] == '\n' || (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      i += text[i] == '\r' ? 2 : 1;  // a blank line
      ++line;
      continue;
    }
    Record record;
    for (;;) {
      std::string field;
      if (i < text.size() && text[i] == '"') {
        ++i;
        for (;;) {
          if (i >= text.size()) {
            return error("extraneous or missing \" in quoted-field");
          }
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          line += text[i] == '\n';
          field += text[i++];
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          return error("extraneous or missing \" in quoted-field");
        }
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n' &&
               !(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
          if (text[i] == '"') {
            return error("bare \" in non-quoted-field");
          }
          field += text[i++];
        }
      }
      record.push_back(std::move(field));
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      break;
    }
    if (i < text.size()) {
      i += text[i] == '\r' ? 2 : 1;
      ++line;
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

util::Result<std::vector<StaticToken>> parseTokenFile(std::string_view text,
                                                      const std::string& path) {
  auto records = readCsv(text, path);
  if (!records.ok()) {
    return records.error();
  }
  std::vector<StaticToken> tokens;
  for (Record& record : *records) {
    if (record.size() < 3) {
      return util::invalidArgument("token file '" + path +
                                   "' must have at least 3 columns (token, user name, user uid), "
                                   "found " +
                                   std::to_string(record.size()));
    }
    if (record[0].empty()) {
      continue;
    }
    StaticToken token{std::move(record[0]), std::move(record[1]), std::move(record[2]), {}};
    if (record.size() >= 4) {
      std::string_view groups = record[3];
      for (;;) {
        const size_t comma = groups.find(',');
        token.groups.emplace_back(groups.substr(0, comma));
        if (comma == std::string_view::npos) break;
        groups.remove_prefix(comma + 1);
      }
    }
    std::erase_if(tokens, [&](const StaticToken& t) { return t.token == token.token; });
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace berth::apiserver
