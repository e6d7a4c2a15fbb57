#pragma once
// Label key/value syntax checks and the integer parsing that selectors use, with upstream's rules
// and messages (apimachinery/pkg/api/validate/content: IsLabelKey, IsLabelValue; strconv.ParseInt).
// The checks do not allocate unless asked for messages, so they can run in the scheduling hot loop.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::labels {

// How messages read. Brief is upstream's message without RegexError's "(e.g. 'MyName', ...,
// regex used for validation is '...')" tail, for berth's configuration errors.
enum class MessageStyle { Upstream, Brief };

// Whether `key` is a label key ([prefix/]name: prefix a DNS-1123 subdomain of at most 253 bytes,
// name at most 63 bytes of [-A-Za-z0-9_.] starting and ending alphanumeric). When `errors` is
// non-null, upstream's messages are appended to it.
bool checkLabelKey(std::string_view key, std::vector<std::string>* errors = nullptr,
                   MessageStyle style = MessageStyle::Upstream);

// The same rules for other qualified names (resource names); only the message for a name with
// several '/' says "a qualified name", as upstream's IsQualifiedName does.
bool checkQualifiedName(std::string_view name, std::vector<std::string>* errors = nullptr,
                        MessageStyle style = MessageStyle::Upstream);

// Whether `value` is a label value (empty, or at most 63 bytes shaped like a key's name part).
bool checkLabelValue(std::string_view value, std::vector<std::string>* errors = nullptr,
                     MessageStyle style = MessageStyle::Upstream);

// Base-10 int64 as Go's strconv.ParseInt(text, 10, 64): optional sign, at least one digit, nothing
// else; out of range is a failure.
std::optional<int64_t> parseInt64(std::string_view text);

}  // namespace berth::labels
