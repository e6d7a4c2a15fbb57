#include "pkg/labels/selector.h"

#include <algorithm>
#include <utility>

#include "pkg/labels/internal/match.h"
#include "pkg/labels/requirement.h"
#include "pkg/labels/validation.h"
#include "pkg/util/quote.h"

namespace berth::labels {
namespace {

using Op = Selector::Op;
using Requirement = Selector::Requirement;

internal::MatchOp toMatchOp(Op op) {
  switch (op) {
    case Op::Equals:
    case Op::In:
      return internal::MatchOp::In;
    case Op::NotEquals:
    case Op::NotIn:
      return internal::MatchOp::NotIn;
    case Op::Exists:
      return internal::MatchOp::Exists;
    case Op::DoesNotExist:
      return internal::MatchOp::DoesNotExist;
    case Op::Gt:
      return internal::MatchOp::Gt;
    case Op::Lt:
      return internal::MatchOp::Lt;
  }
  return internal::MatchOp::In;
}

// Go's %#v of a []string, as upstream prints a bad value list.
std::string goStringSlice(const std::vector<std::string>& values) {
  if (values.empty()) {
    return "[]string(nil)";
  }
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += util::quoteGo(values[i]);
  }
  out += "}";
  return out;
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += separator;
    }
    out += parts[i];
  }
  return out;
}

// field.Invalid(path, value, detail).Error().
std::string invalidField(std::string_view path, std::string_view quotedValue,
                         std::string_view detail) {
  std::string out(path);
  out += ": Invalid value: ";
  out += quotedValue;
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

// utilerrors.NewAggregate(...).Error() after field.ErrorList.ToAggregate's de-duplication.
std::string aggregate(const std::vector<std::string>& errors) {
  std::vector<std::string> unique;
  for (const std::string& e : errors) {
    if (std::find(unique.begin(), unique.end(), e) == unique.end()) {
      unique.push_back(e);
    }
  }
  if (unique.size() == 1) {
    return unique.front();
  }
  // Appended, not "[" + ... + "]": g++ 12 at -O3 reports a false -Wrestrict on the operator+ chain.
  std::string out = "[";
  out += joined(unique, ", ");
  out += ']';
  return out;
}

// Upstream's labels.NewRequirement errors, with its messages.
util::Result<void> validateRequirement(const Requirement& r) {
  std::vector<std::string> errors;
  for (const RequirementProblem& problem : requirementProblems(r)) {
    std::vector<std::string> details;
    switch (problem.rule) {
      case RequirementProblem::Rule::BadKey:
        checkLabelKey(r.key, &details);
        errors.push_back(invalidField("key", util::quoteGo(r.key), joined(details, "; ")));
        break;
      case RequirementProblem::Rule::ValuesRequired:
        errors.push_back(invalidField("values", goStringSlice(r.values),
                                      "for 'in', 'notin' operators, values set can't be empty"));
        break;
      case RequirementProblem::Rule::ValuesForbidden:
        errors.push_back(invalidField("values", goStringSlice(r.values),
                                      "values set must be empty for exists and does not exist"));
        break;
      case RequirementProblem::Rule::OneValueRequired:
        errors.push_back(
            invalidField("values", goStringSlice(r.values),
                         r.op == Op::Gt || r.op == Op::Lt
                             ? "for 'Gt', 'Lt' operators, exactly one value is required"
                             : "exact-match compatibility requires one single value"));
        break;
      case RequirementProblem::Rule::NotAnInteger:
        errors.push_back(invalidField("values[" + std::to_string(problem.value) + "]",
                                      util::quoteGo(r.values[problem.value]),
                                      "for 'Gt', 'Lt' operators, the value must be an integer"));
        break;
      case RequirementProblem::Rule::BadValue:
        checkLabelValue(r.values[problem.value], &details);
        errors.push_back(
            invalidField("values[" + std::to_string(problem.value) + "][" + r.key + "]",
                         util::quoteGo(r.values[problem.value]), joined(details, "; ")));
        break;
    }
  }
  if (errors.empty()) {
    return {};
  }
  return util::invalidArgument(aggregate(errors));
}

// --- Lexer ---------------------------------------------------------------------------------------

enum class Tok {
  End,
  Identifier,  // also the words "in" and "notin", which are operators only after a key
  Comma,
  OpenPar,
  ClosePar,
  Bang,
  Equals,
  DoubleEquals,
  NotEquals,
  Gt,
  Lt,
};

struct Token {
  Tok kind;
  std::string_view text;
};

bool isWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool isSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

// Splits the whole input up front, ending with one End token. Upstream's lexer reads a NUL byte
// as end of input at the start of a token and swallows one directly after a token; we do the same
// so odd inputs parse identically.
std::vector<Token> lex(std::string_view s) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (true) {
    while (i < s.size() && isWhitespace(s[i])) {
      ++i;
    }
    if (i >= s.size() || s[i] == '\0') {
      tokens.push_back({Tok::End, {}});
      return tokens;
    }
    size_t start = i;
    Tok kind = Tok::Identifier;
    if (isSymbol(s[i])) {
      char next = i + 1 < s.size() ? s[i + 1] : '\0';
      if (s[i] == '!' && next == '=') {
        kind = Tok::NotEquals, i += 2;
      } else if (s[i] == '=' && next == '=') {
        kind = Tok::DoubleEquals, i += 2;
      } else {
        switch (s[i]) {
          case '=':
            kind = Tok::Equals;
            break;
          case '!':
            kind = Tok::Bang;
            break;
          case '(':
            kind = Tok::OpenPar;
            break;
          case ')':
            kind = Tok::ClosePar;
            break;
          case ',':
            kind = Tok::Comma;
            break;
          case '>':
            kind = Tok::Gt;
            break;
          default:
            kind = Tok::Lt;
            break;
        }
        ++i;
      }
    } else {
      while (i < s.size() && s[i] != '\0' && !isSymbol(s[i]) && !isWhitespace(s[i])) {
        ++i;
      }
    }
    tokens.push_back({kind, s.substr(start, i - start)});
    if (i < s.size() && s[i] == '\0') {
      ++i;
    }
  }
}

// --- Parser --------------------------------------------------------------------------------------

// Recursive descent over the grammar documented on upstream's labels.Parse:
//   selector    := requirement ("," requirement)*
//   requirement := "!" KEY
//                | KEY [ ("in" | "notin") "(" values ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
class Parser {
 public:
  explicit Parser(std::string_view text) : tokens_(lex(text)) {}

  util::Result<std::vector<Requirement>> parse() {
    std::vector<Requirement> requirements;
    if (peek().kind == Tok::End) {
      return requirements;
    }
    while (true) {
      const Token& start = peek();
      if (start.kind != Tok::Identifier && start.kind != Tok::Bang) {
        return fail("found '", start.text, "', expected: !, identifier, or 'end of string'");
      }
      util::Result<Requirement> r = parseRequirement();
      if (!r.ok()) {
        return util::invalidArgument("unable to parse requirement: " + r.error().message);
      }
      requirements.push_back(std::move(*r));
      const Token& after = next();
      if (after.kind == Tok::End) {
        return requirements;
      }
      if (after.kind != Tok::Comma) {
        return fail("found '", after.text, "', expected: ',' or 'end of string'");
      }
      const Token& following = peek();
      if (following.kind != Tok::Identifier && following.kind != Tok::Bang) {
        return fail("found '", following.text, "', expected: identifier after ','");
      }
    }
  }

 private:
  static util::Error fail(std::string_view before, std::string_view literal,
                          std::string_view after) {
    std::string message(before);
    message += literal;
    message += after;
    return util::invalidArgument(std::move(message));
  }

  const Token& peek() const { return tokens_[pos_]; }
  // The End token repeats forever, so reading past it is safe.
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) {
      ++pos_;
    }
    return t;
  }

  util::Result<Requirement> parseRequirement() {
    Requirement r;
    Token t = next();
    const bool negated = t.kind == Tok::Bang;
    if (negated) {
      t = next();
    }
    if (t.kind != Tok::Identifier) {
      return fail("found '", t.text, "', expected: identifier");
    }
    r.key = std::string(t.text);
    std::vector<std::string> details;
    if (!checkLabelKey(r.key, &details)) {
      // Upstream validates here with a nil field path, which prints as "<nil>".
      return util::invalidArgument(
          invalidField("<nil>", util::quoteGo(r.key), joined(details, "; ")));
    }
    if (negated) {
      r.op = Op::DoesNotExist;
      return r;
    }
    if (peek().kind == Tok::End || peek().kind == Tok::Comma) {
      r.op = Op::Exists;
      return r;
    }
    const Token& op = next();
    switch (op.kind) {
      case Tok::Equals:
      case Tok::DoubleEquals:
        r.op = Op::Equals;
        break;
      case Tok::NotEquals:
        r.op = Op::NotEquals;
        break;
      case Tok::Gt:
        r.op = Op::Gt;
        break;
      case Tok::Lt:
        r.op = Op::Lt;
        break;
      case Tok::Identifier:
        if (op.text == "in") {
          r.op = Op::In;
          break;
        }
        if (op.text == "notin") {
          r.op = Op::NotIn;
          break;
        }
        [[fallthrough]];
      default:
        return fail("found '", op.text, "', expected: in, notin, =, ==, !=, gt, lt");
    }
    util::Result<void> values =
        (r.op == Op::In || r.op == Op::NotIn) ? parseValueSet(r.values) : parseValue(r.values);
    if (!values.ok()) {
      return values.error();
    }
    util::Result<void> valid = validateRequirement(r);
    if (!valid.ok()) {
      return valid.error();
    }
    return r;
  }

  // "(" [values] ")": a set, so the result is sorted and unique; empty items are "" values.
  util::Result<void> parseValueSet(std::vector<std::string>& values) {
    const Token& open = next();
    if (open.kind != Tok::OpenPar) {
      return fail("found '", open.text, "' expected: '('");
    }
    const Token& first = peek();
    if (first.kind == Tok::ClosePar) {
      next();
      values.emplace_back();
      return {};
    }
    if (first.kind != Tok::Identifier && first.kind != Tok::Comma) {
      return fail("found '", first.text, "', expected: ',', ')' or identifier");
    }
    while (true) {
      const Token& t = next();
      if (t.kind == Tok::Identifier) {
        values.emplace_back(t.text);
        const Token& la = peek();
        if (la.kind == Tok::ClosePar) {
          next();
          break;
        }
        if (la.kind != Tok::Comma) {
          return fail("found '", la.text, "', expected: ',' or ')'");
        }
      } else if (t.kind == Tok::Comma) {
        // An empty item before this comma, after it (before ')') or between two commas is "".
        if (values.empty()) {
          values.emplace_back();
        }
        const Token& la = peek();
        if (la.kind == Tok::ClosePar) {
          values.emplace_back();
          next();
          break;
        }
        if (la.kind == Tok::Comma) {
          values.emplace_back();
        }
      } else {
        return fail("found '", t.text, "', expected: ',', or identifier");
      }
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return {};
  }

  // The single value after =, ==, !=, > or <; nothing before ',' or the end means "".
  util::Result<void> parseValue(std::vector<std::string>& values) {
    if (peek().kind == Tok::End || peek().kind == Tok::Comma) {
      values.emplace_back();
      return {};
    }
    const Token& t = next();
    if (t.kind != Tok::Identifier) {
      return fail("found '", t.text, "', expected: identifier");
    }
    values.emplace_back(t.text);
    return {};
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

void sortByKey(std::vector<Requirement>& requirements) {
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
}

}  // namespace

util::Result<Selector> Selector::parse(std::string_view text) {
  util::Result<std::vector<Requirement>> requirements = Parser(text).parse();
  if (!requirements.ok()) {
    return requirements.error();
  }
  Selector selector;
  selector.requirements_ = std::move(*requirements);
  sortByKey(selector.requirements_);
  return selector;
}

util::Result<Selector> Selector::fromLabelSelector(const api::LabelSelector& labelSelector) {
  Selector selector;
  for (const auto& [key, value] : labelSelector.matchLabels) {
    Requirement r{key, Op::Equals, {value}};
    util::Result<void> valid = validateRequirement(r);
    if (!valid.ok()) {
      return valid.error();
    }
    selector.requirements_.push_back(std::move(r));
  }
  for (const api::LabelSelectorRequirement& expr : labelSelector.matchExpressions) {
    Requirement r{expr.key, Op::In, expr.values};
    if (expr.op == "In") {
      r.op = Op::In;
    } else if (expr.op == "NotIn") {
      r.op = Op::NotIn;
    } else if (expr.op == "Exists") {
      r.op = Op::Exists;
    } else if (expr.op == "DoesNotExist") {
      r.op = Op::DoesNotExist;
    } else {
      return util::invalidArgument(util::quoteGo(expr.op) +
                                   " is not a valid pod selector operator");
    }
    util::Result<void> valid = validateRequirement(r);
    if (!valid.ok()) {
      return valid.error();
    }
    selector.requirements_.push_back(std::move(r));
  }
  sortByKey(selector.requirements_);
  return selector;
}

Selector Selector::fromSet(const api::StringMap& set) {
  Selector selector;
  selector.requirements_.reserve(set.size());
  for (const auto& [key, value] : set) {  // std::map: already sorted by key
    selector.requirements_.push_back(Requirement{key, Op::Equals, {value}});
  }
  return selector;
}

bool Selector::matches(const api::StringMap& labels) const {
  for (const Requirement& r : requirements_) {
    if (!internal::matchLabels(toMatchOp(r.op), r.key, r.values, labels)) {
      return false;
    }
  }
  return true;
}

std::string Selector::toString() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    const Requirement& r = requirements_[i];
    if (i > 0) {
      out += ',';
    }
    if (r.op == Op::DoesNotExist) {
      out += '!';
    }
    out += r.key;
    switch (r.op) {
      case Op::Exists:
      case Op::DoesNotExist:
        continue;
      case Op::Equals:
        out += '=';
        break;
      case Op::NotEquals:
        out += "!=";
        break;
      case Op::In:
        out += " in (";
        break;
      case Op::NotIn:
        out += " notin (";
        break;
      case Op::Gt:
        out += '>';
        break;
      case Op::Lt:
        out += '<';
        break;
    }
    std::vector<std::string> values = r.values;
    std::sort(values.begin(), values.end());
    out += joined(values, ",");
    if (r.op == Op::In || r.op == Op::NotIn) {
      out += ')';
    }
  }
  return out;
}

}  // namespace berth::labels
