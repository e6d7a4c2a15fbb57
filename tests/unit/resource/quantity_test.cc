#include "pkg/resource/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace berth::resource {
namespace {

using Format = Quantity::Format;
using namespace std::string_view_literals;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Quantity mustParse(std::string_view text) {
  auto q = Quantity::parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << (q.ok() ? "" : q.error().message);
  return q.ok() ? *q : Quantity();
}

struct ParseCase {
  std::string_view input;
  std::string_view canonical;  // toString()
  int64_t value;
  int64_t milli;
  Format format;
};

// Drawn from upstream's quantity_test.go (TestQuantityParse, TestQuantityParseEmit,
// TestQuantityString alternates, TestParseQuantity, TestNegativeValueRoundsAwayFromZero,
// TestParseQuantitySubNanoRoundsUp); canonical strings are upstream's String().
constexpr ParseCase kParseCases[] = {
    // Zeros keep the suffix's format but always print "0".
    {"0", "0", 0, 0, Format::DecimalSI},
    {"0n", "0", 0, 0, Format::DecimalSI},
    {"0m", "0", 0, 0, Format::DecimalSI},
    {"0k", "0", 0, 0, Format::DecimalSI},
    {"0T", "0", 0, 0, Format::DecimalSI},
    {"0Ki", "0", 0, 0, Format::BinarySI},
    {"0Ti", "0", 0, 0, Format::BinarySI},
    {"00", "0", 0, 0, Format::DecimalSI},
    {"-0", "0", 0, 0, Format::DecimalSI},
    {"0e-2147483647", "0", 0, 0, Format::DecimalExponent},
    {"0.0e-100", "0", 0, 0, Format::DecimalExponent},
    // Binary suffixes.
    {"1", "1", 1, 1000, Format::DecimalSI},
    {"1Ki", "1Ki", 1024, 1024000, Format::BinarySI},
    {"8Ki", "8Ki", 8192, 8192000, Format::BinarySI},
    {"7Mi", "7Mi", 7340032, 7340032000, Format::BinarySI},
    {"6Gi", "6Gi", 6442450944, 6442450944000, Format::BinarySI},
    {"5Ti", "5Ti", 5497558138880, 5497558138880000, Format::BinarySI},
    {"4Pi", "4Pi", 4503599627370496, 4503599627370496000, Format::BinarySI},
    {"3Ei", "3Ei", 3458764513820540928, kMax, Format::BinarySI},
    {"100Ti", "100Ti", 109951162777600, 109951162777600000, Format::BinarySI},
    {"1024Mi", "1Gi", 1073741824, 1073741824000, Format::BinarySI},
    {"307200Ki", "300Mi", 314572800, 314572800000, Format::BinarySI},
    {"1025024Mi", "1001Gi", 1074815565824, 1074815565824000, Format::BinarySI},
    {"1024Gi", "1Ti", 1099511627776, 1099511627776000, Format::BinarySI},
    // Decimal suffixes.
    {"5n", "5n", 1, 1, Format::DecimalSI},
    {"4u", "4u", 1, 1, Format::DecimalSI},
    {"3m", "3m", 1, 3, Format::DecimalSI},
    {"100m", "100m", 1, 100, Format::DecimalSI},
    {"1000m", "1", 1, 1000, Format::DecimalSI},
    {"8k", "8k", 8000, 8000000, Format::DecimalSI},
    {"50k", "50k", 50000, 50000000, Format::DecimalSI},
    {"7M", "7M", 7000000, 7000000000, Format::DecimalSI},
    {"6G", "6G", 6000000000, 6000000000000, Format::DecimalSI},
    {"300T", "300T", 300000000000000, 300000000000000000, Format::DecimalSI},
    {"2P", "2P", 2000000000000000, 2000000000000000000, Format::DecimalSI},
    {"1E", "1E", 1000000000000000000, kMax, Format::DecimalSI},
    {"12E", "12E", kMax, kMax, Format::DecimalSI},
    {"1000M", "1G", 1000000000, 1000000000000, Format::DecimalSI},
    {"0.001T", "1G", 1000000000, 1000000000000, Format::DecimalSI},
    {"1000u", "1m", 1, 1, Format::DecimalSI},
    {"1080000000n", "1080m", 2, 1080, Format::DecimalSI},
    {"5000m", "5", 5, 5000, Format::DecimalSI},
    // DecimalSI past "E" falls back to e-notation (upstream's fix for "1000E" printing "1").
    {"1000E", "1e21", kMax, kMax, Format::DecimalSI},
    {"5000E", "5e21", kMax, kMax, Format::DecimalSI},
    // Decimal exponents.
    {"1E-3", "1e-3", 1, 1, Format::DecimalExponent},
    {"1e3", "1e3", 1000, 1000000, Format::DecimalExponent},
    {"1E6", "1e6", 1000000, 1000000000, Format::DecimalExponent},
    {"1e9", "1e9", 1000000000, 1000000000000, Format::DecimalExponent},
    {"1E18", "1e18", 1000000000000000000, kMax, Format::DecimalExponent},
    {"1e14", "100e12", 100000000000000, 100000000000000000, Format::DecimalExponent},
    {"1e13", "10e12", 10000000000000, 10000000000000000, Format::DecimalExponent},
    {"1e+3", "1e3", 1000, 1000000, Format::DecimalExponent},
    {"1e03", "1e3", 1000, 1000000, Format::DecimalExponent},
    {".001e12", "1e9", 1000000000, 1000000000000, Format::DecimalExponent},
    {"0.001e0", "1e-3", 1, 1, Format::DecimalExponent},
    {"1000e-12", "1e-9", 1, 1, Format::DecimalExponent},
    // Things that look like floating point.
    {"100.035k", "100035", 100035, 100035000, Format::DecimalSI},
    {"0.001", "1m", 1, 1, Format::DecimalSI},
    {"0.0005k", "500m", 1, 500, Format::DecimalSI},
    {"0.5", "500m", 1, 500, Format::DecimalSI},
    {"0.1", "100m", 1, 100, Format::DecimalSI},
    {"0.00050k", "500m", 1, 500, Format::DecimalSI},
    {"0.50000", "500m", 1, 500, Format::DecimalSI},
    {"1.5", "1500m", 2, 1500, Format::DecimalSI},
    {"1.08", "1080m", 2, 1080, Format::DecimalSI},
    {"0.5e0", "500e-3", 1, 500, Format::DecimalExponent},
    {"0.5e-1", "50e-3", 1, 50, Format::DecimalExponent},
    {"0.5e-2", "5e-3", 1, 5, Format::DecimalExponent},
    {"10.035M", "10035k", 10035000, 10035000000, Format::DecimalSI},
    {"1.2e3", "1200", 1200, 1200000, Format::DecimalExponent},
    {"1.3E+6", "1300e3", 1300000, 1300000000, Format::DecimalExponent},
    {"1.40e9", "1400e6", 1400000000, 1400000000000, Format::DecimalExponent},
    {"1.53E12", "1530e9", 1530000000000, 1530000000000000, Format::DecimalExponent},
    {"1.7E18", "1700e15", 1700000000000000000, kMax, Format::DecimalExponent},
    {"9.01", "9010m", 10, 9010, Format::DecimalSI},
    {"8.1k", "8100", 8100, 8100000, Format::DecimalSI},
    {"7.123456M", "7123456", 7123456, 7123456000, Format::DecimalSI},
    {"6.987654321G", "6987654321", 6987654321, 6987654321000, Format::DecimalSI},
    {"5.444T", "5444G", 5444000000000, 5444000000000000, Format::DecimalSI},
    {"40.1T", "40100G", 40100000000000, 40100000000000000, Format::DecimalSI},
    {"2.5P", "2500T", 2500000000000000, 2500000000000000000, Format::DecimalSI},
    {"1.01E", "1010P", 1010000000000000000, kMax, Format::DecimalSI},
    // Magnitudes below 1n round up (away from zero) to the next nano.
    {"3.001n", "4n", 1, 1, Format::DecimalSI},
    {"1.1E-9", "2e-9", 1, 1, Format::DecimalExponent},
    {"0.0000000001", "1n", 1, 1, Format::DecimalSI},
    {"0.00000000050", "1n", 1, 1, Format::DecimalSI},
    {"0.5e-9", "1e-9", 1, 1, Format::DecimalExponent},
    {"0.9n", "1n", 1, 1, Format::DecimalSI},
    {"0.00000012345", "124n", 1, 1, Format::DecimalSI},
    {"0.00000012354", "124n", 1, 1, Format::DecimalSI},
    {"1e-100", "1e-9", 1, 1, Format::DecimalExponent},
    {"-1e-2147483647", "-1e-9", -1, -1, Format::DecimalExponent},
    {"15e-10", "2e-9", 1, 1, Format::DecimalExponent},
    {"1000000000000000000001e-30", "2e-9", 1, 1, Format::DecimalExponent},
    {"999999999999999999999e-30", "1e-9", 1, 1, Format::DecimalExponent},
    {"1.0000000000000000000001", "1000000001n", 2, 1001, Format::DecimalSI},
    // Fractional binary quantities; below one they become DecimalSI.
    {"100.035Ki", "102435840m", 102436, 102435840, Format::BinarySI},
    {"0.5Mi", "512Ki", 524288, 524288000, Format::BinarySI},
    {"0.5Gi", "512Mi", 536870912, 536870912000, Format::BinarySI},
    {"1.5Gi", "1536Mi", 1610612736, 1610612736000, Format::BinarySI},
    {"0.05Gi", "53687091200m", 53687092, 53687091200, Format::BinarySI},
    {"0.025Ti", "27487790694400m", 27487790695, 27487790694400, Format::BinarySI},
    {"1.5Ki", "1536", 1536, 1536000, Format::BinarySI},
    {".001Ki", "1024m", 2, 1024, Format::BinarySI},
    {".000001Ki", "1024u", 1, 2, Format::DecimalSI},
    {".000000001Ki", "1024n", 1, 1, Format::DecimalSI},
    {".000000000001Ki", "2n", 1, 1, Format::DecimalSI},
    {"0.00000000000000000000001Ki", "1n", 1, 1, Format::DecimalSI},
    {"9.5000000001Gi", "10200547328107374183n", 10200547329, 10200547328108, Format::BinarySI},
    {"-9.5000000001Gi", "-10200547328107374183n", -10200547329, -10200547328108, Format::BinarySI},
    // BinarySI saturates at 2^63-1 units while parsing, as upstream does.
    {"9Ei", "9223372036854775807", kMax, kMax, Format::BinarySI},
    {"9223372036854775807Ki", "9223372036854775807", kMax, kMax, Format::BinarySI},
    {"-9Ei", "-9223372036854775807", -kMax, kMin, Format::BinarySI},
    // Negative values round away from zero.
    {"-1", "-1", -1, -1000, Format::DecimalSI},
    {"-1500m", "-1500m", -2, -1500, Format::DecimalSI},
    {"-0.0005", "-500u", -1, -1, Format::DecimalSI},
    {"-.484785E-1", "-48478500e-9", -1, -49, Format::DecimalExponent},
    {"-1Ki", "-1Ki", -1024, -1024000, Format::BinarySI},
    // Written by trolls, still parsable.
    {".001", "1m", 1, 1, Format::DecimalSI},
    {".0001k", "100m", 1, 100, Format::DecimalSI},
    {".5", "500m", 1, 500, Format::DecimalSI},
    {"1.", "1", 1, 1000, Format::DecimalSI},
    {"5.", "5", 5, 5000, Format::DecimalSI},
    {"1.G", "1G", 1000000000, 1000000000000, Format::DecimalSI},
    {"+1Ki", "1Ki", 1024, 1024000, Format::BinarySI},
    {"01", "1", 1, 1000, Format::DecimalSI},
    // Around and beyond int64 (TestParseQuantity): exact, value() saturates.
    {"999999999999999999.1", "999999999999999999100m", 1000000000000000000, kMax,
     Format::DecimalSI},
    {"9999999999999999999", "9999999999999999999", kMax, kMax, Format::DecimalSI},
    {"9999999999999999999000m", "9999999999999999999", kMax, kMax, Format::DecimalSI},
    {"1000000000000000000", "1E", 1000000000000000000, kMax, Format::DecimalSI},
    {"1.0000000000000000001E", "1000000000000000000100m", 1000000000000000001, kMax,
     Format::DecimalSI},
    {"10.000000000000000001E", "10000000000000000001", kMax, kMax, Format::DecimalSI},
    {"10000000000000000000", "10E", kMax, kMax, Format::DecimalSI},
    {"-10000000000000000000000m", "-10E", kMin, kMin, Format::DecimalSI},
    {"9223372036854775807", "9223372036854775807", kMax, kMax, Format::DecimalSI},
    {"9223372036854775806.0", "9223372036854775806", 9223372036854775806, kMax, Format::DecimalSI},
    {"9223372036854775807.1", "9223372036854775807100m", kMax, kMax, Format::DecimalSI},
    {"-9223372036854775808", "-9223372036854775808", kMin, kMin, Format::DecimalSI},
    {"-9223372036854775809", "-9223372036854775809", kMin, kMin, Format::DecimalSI},
    {"9223372036854775808.1", "9223372036854775808100m", kMax, kMax, Format::DecimalSI},
};

TEST(Quantity, ParsesUpstreamTable) {
  for (const ParseCase& c : kParseCases) {
    SCOPED_TRACE(c.input);
    auto q = Quantity::parse(c.input);
    ASSERT_TRUE(q.ok()) << q.error().message;
    EXPECT_EQ(q->toString(), c.canonical);
    EXPECT_EQ(q->value(), c.value);
    EXPECT_EQ(q->milliValue(), c.milli);
    EXPECT_EQ(q->format(), c.format);
    // The canonical form parses back to the same amount.
    EXPECT_EQ(mustParse(q->toString()), *q);
  }
}

TEST(Quantity, ParsesUpstreamOdditiesAsZero) {
  // Upstream's scanner does not require digits: a lone sign, a lone '.', or a bare suffix is a
  // zero quantity (TestParseQuantityString lists "." and "-." as valid).
  const struct {
    std::string_view input;
    Format format;
  } cases[] = {
      {"+", Format::DecimalSI},  {"-", Format::DecimalSI},        {".", Format::DecimalSI},
      {"-.", Format::DecimalSI}, {"+.", Format::DecimalSI},       {"m", Format::DecimalSI},
      {"E", Format::DecimalSI},  {"Ki", Format::BinarySI},        {"-Mi", Format::BinarySI},
      {".Ki", Format::BinarySI}, {"e3", Format::DecimalExponent},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    auto q = Quantity::parse(c.input);
    ASSERT_TRUE(q.ok()) << q.error().message;
    EXPECT_TRUE(q->isZero());
    EXPECT_EQ(q->format(), c.format);
    EXPECT_EQ(q->toString(), "0");
  }
}

TEST(Quantity, RejectsWhatUpstreamRejects) {
  constexpr std::string_view kRejected[] = {
      "",
      "1.2.3",
      "abc",
      "1Q",
      "1 Ki",
      " 1",
      "1 ",
      "1i",
      "1e",
      "1E+",
      "1e-",
      "1KiB",
      "1m1",
      "1.1.M",
      "1+1.0M",
      "0.1mi",
      "0.1am",
      "aoeu",
      ".5i",
      "-3.01i",
      "-3.01e-",
      "1K",
      "1ki",
      "1mi",
      "1kK",
      "1ee3",
      "1Kie3",
      "1e1.5",
      "1e+-3",
      "--1",
      "+-1",
      "1-",
      "1+",
      "0x10",
      "1_000",
      "1,5",
      "NaN",
      "Inf",
      "1\n",
      "\t1",
      "1e3 ",
      "1\0"sv,
      // Exponents outside ±(2^31-1) are rejected rather than truncated.
      "1e4294967297",
      "1e2147483648",
      "1E-2147483648",
      "1E9223372036854775808",
      "1e99999999999999999999999",
  };
  for (std::string_view input : kRejected) {
    SCOPED_TRACE(testing::PrintToString(std::string(input)));
    auto q = Quantity::parse(input);
    ASSERT_FALSE(q.ok()) << q->toString();
    EXPECT_EQ(q.error().code, util::ErrorCode::InvalidArgument);
    EXPECT_EQ(q.error().message.rfind("invalid quantity \"", 0), 0u) << q.error().message;
  }
}

TEST(Quantity, ErrorMessageNamesTheText) {
  auto q = Quantity::parse("abc");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message, "invalid quantity \"abc\"");
  EXPECT_EQ(
      q.error().wrap("pod default/web-1: spec.containers[0].resources.requests.cpu").message,
      "pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"abc\"");

  // Quotes and control bytes are escaped; very long text is cut.
  auto escaped = Quantity::parse("1\"\\\x01");
  ASSERT_FALSE(escaped.ok());
  EXPECT_EQ(escaped.error().message, "invalid quantity \"1\\\"\\\\\\x01\"");
  auto long_text = Quantity::parse(std::string(1000, '1') + "x");
  ASSERT_FALSE(long_text.ok());
  EXPECT_EQ(long_text.error().message, "invalid quantity \"" + std::string(64, '1') + "...\"");
}

TEST(Quantity, FromMilliAndFromValue) {
  // Upstream's TestMilliNewSet and TestNewSet.
  const struct {
    Quantity q;
    std::string_view canonical;
    int64_t milli;
  } cases[] = {
      {Quantity::fromMilli(1), "1m", 1},
      {Quantity::fromMilli(1000), "1", 1000},
      {Quantity::fromMilli(1234000), "1234", 1234000},
      {Quantity::fromMilli(1024, Format::BinarySI), "1024m", 1024},
      {Quantity::fromMilli(1024 * 1024, Format::BinarySI), "1048576m", 1024 * 1024},
      {Quantity::fromMilli(1000000, Format::DecimalExponent), "1e3", 1000000},
      {Quantity::fromMilli(-2500), "-2500m", -2500},
      {Quantity::fromValue(1), "1", 1000},
      {Quantity::fromValue(1000), "1k", 1000000},
      {Quantity::fromValue(1234000), "1234k", 1234000000},
      {Quantity::fromValue(1024, Format::BinarySI), "1Ki", 1024000},
      {Quantity::fromValue(1000000, Format::DecimalExponent), "1e6", 1000000000},
      {Quantity::fromValue(1024 * 1024, Format::BinarySI), "1Mi", 1048576000},
      {Quantity::fromValue(1000, Format::BinarySI), "1k", 1000000},  // |v| < 1024: decimal
      {Quantity::fromValue(-1000, Format::BinarySI), "-1k", -1000000},
      {Quantity::fromValue(1023, Format::BinarySI), "1023", 1023000},
      {Quantity::fromValue(2000, Format::BinarySI), "2000", 2000000},
      {Quantity::fromValue(-2000, Format::BinarySI), "-2000", -2000000},
      {Quantity::fromValue(0, Format::BinarySI), "0", 0},
      {Quantity::fromValue(kMax), "9223372036854775807", kMax},
      {Quantity::fromValue(kMin), "-9223372036854775808", kMin},
      {Quantity::fromMilli(kMin), "-9223372036854775808m", kMin},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.canonical);
    EXPECT_EQ(c.q.toString(), c.canonical);
    EXPECT_EQ(c.q.milliValue(), c.milli);
    EXPECT_EQ(mustParse(c.canonical), c.q);
  }
  EXPECT_EQ(Quantity::fromValue(kMin).value(), kMin);
  EXPECT_EQ(Quantity::fromMilli(kMax).value(), 9223372036854776);
  EXPECT_EQ(Quantity().toString(), "0");
  EXPECT_EQ(Quantity().format(), Format::DecimalSI);
}

TEST(Quantity, ComparesExactlyAcrossFormats) {
  const struct {
    std::string_view a;
    std::string_view b;
    int want;
  } cases[] = {
      {"0", "0", 0},           {"100m", "50m", 1},      {"50m", "100m", -1}, {"10000T", "100Gi", 1},
      {"1Ki", "1024", 0},      {"1e3", "1k", 0},        {"1000m", "1", 0},   {"1.5Gi", "1536Mi", 0},
      {"1n", "0", 1},          {"-1n", "0", -1},        {"1Ei", "1E", 1},    {"0Ki", "0e5", 0},
      {"100Gi", "10000T", -1}, {"1000000001n", "1", 1}, {"-1Ki", "-1k", -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.a) + " vs " + std::string(c.b));
    const Quantity a = mustParse(c.a);
    const Quantity b = mustParse(c.b);
    EXPECT_EQ(a.cmp(b), c.want);
    EXPECT_EQ(b.cmp(a), -c.want);
    EXPECT_EQ(a == b, c.want == 0);
  }
}

TEST(Quantity, AddsAndSubtractsExactly) {
  // Upstream's TestAdd/TestSub: the receiver keeps its format unless it is zero.
  const struct {
    Quantity a;
    Quantity b;
    bool subtract;
    std::string_view want;
    Format format;
  } cases[] = {
      {Quantity::fromValue(10), mustParse("1e1"), false, "20", Format::DecimalSI},
      {Quantity::fromValue(10), Quantity::fromValue(1, Format::BinarySI), false, "11",
       Format::DecimalSI},
      {Quantity::fromValue(10, Format::BinarySI), Quantity::fromValue(1), false, "11",
       Format::BinarySI},
      {Quantity(), Quantity::fromValue(50), false, "50", Format::DecimalSI},
      {Quantity::fromValue(50), Quantity(), false, "50", Format::DecimalSI},
      {Quantity(), mustParse("1Gi"), false, "1Gi", Format::BinarySI},
      {mustParse("1Gi"), Quantity(), false, "1Gi", Format::BinarySI},
      {mustParse("100m"), mustParse("0"), false, "100m", Format::DecimalSI},
      {Quantity::fromValue(10), mustParse("1e1"), true, "0", Format::DecimalSI},
      {Quantity::fromValue(10), Quantity::fromValue(1, Format::BinarySI), true, "9",
       Format::DecimalSI},
      {Quantity::fromValue(10, Format::BinarySI), Quantity::fromValue(1), true, "9",
       Format::BinarySI},
      {Quantity(), Quantity::fromValue(50), true, "-50", Format::DecimalSI},
      {Quantity(), mustParse("1Gi"), true, "-1Gi", Format::BinarySI},
      {Quantity(), mustParse("9.01"), true, "-9010m", Format::DecimalSI},
      {mustParse("1Gi"), mustParse("512Mi"), true, "512Mi", Format::BinarySI},
      {mustParse("1"), mustParse("1n"), true, "999999999n", Format::DecimalSI},
      {mustParse("100m"), mustParse("1.9"), false, "2", Format::DecimalSI},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    Quantity q = c.a;
    if (c.subtract) {
      q.sub(c.b);
    } else {
      q.add(c.b);
    }
    EXPECT_EQ(q.toString(), c.want);
    EXPECT_EQ(q.format(), c.format);
  }
}

TEST(Quantity, AddSubRoundTripCancels) {
  // Upstream's TestAddSubRoundTrip over scales 1n .. 1e8, built through the parser.
  std::mt19937_64 rng(20240601);
  for (int scale = -9; scale <= 8; ++scale) {
    SCOPED_TRACE(scale);
    Quantity sum;
    std::vector<Quantity> added;
    for (int i = 0; i < 100; ++i) {
      const auto j = static_cast<int64_t>(rng() >> 1);
      added.push_back(mustParse(std::to_string(j) + "e" + std::to_string(scale)));
      sum.add(added.back());
    }
    EXPECT_EQ(sum.sign(), 1);
    for (const Quantity& q : added) {
      sum.sub(q);
    }
    EXPECT_TRUE(sum.isZero()) << sum.toString();
  }
}

TEST(Quantity, SaturatesInsteadOfOverflowing) {
  const Quantity max = mustParse("1e29");  // the largest magnitude kept exactly
  EXPECT_EQ(max.toString(), "100e27");
  EXPECT_EQ(mustParse("1e30"), max);
  EXPECT_EQ(mustParse("1e2147483647"), max);
  EXPECT_EQ(mustParse("99999999999999999999999999999999999999999999999"), max);
  EXPECT_EQ(mustParse(std::string(5000, '9') + "." + std::string(5000, '9')), max);
  EXPECT_EQ(mustParse("-1e30").toString(), "-100e27");
  EXPECT_EQ(mustParse("99999999999999999999999999999"),  // 10^29 - 1: still exact
            mustParse("99999999999999999999999999999000m"));
  EXPECT_EQ(mustParse("99999999999999999999999999999").cmp(max), -1);

  // Sums clamp at the same bound, in both directions, without wrapping.
  Quantity sum = max;
  sum.add(max);
  EXPECT_EQ(sum, max);
  sum.add(mustParse("1n"));
  EXPECT_EQ(sum, max);
  sum.sub(mustParse("1"));
  EXPECT_EQ(sum.cmp(max), -1);
  Quantity low = mustParse("-1e29");
  low.sub(max);
  EXPECT_EQ(low, mustParse("-1e29"));
  low.add(mustParse("-1n"));
  EXPECT_EQ(low, mustParse("-1e29"));
  EXPECT_EQ(low.value(), kMin);
  EXPECT_EQ(low.milliValue(), kMin);
  EXPECT_EQ(max.value(), kMax);
  EXPECT_EQ(max.milliValue(), kMax);

  // value() and milliValue() saturate at int64 and round away from zero first.
  EXPECT_EQ(mustParse("9223372036854775807").milliValue(), kMax);
  EXPECT_EQ(mustParse("9223372036854775806.5").value(), kMax);
  EXPECT_EQ(mustParse("9223372036854775807.5").value(), kMax);
  EXPECT_EQ(mustParse("-9223372036854775808").value(), kMin);
  EXPECT_EQ(mustParse("-9223372036854775807.5").value(), kMin);
  EXPECT_EQ(mustParse("9223372036854775807m").milliValue(), kMax);
  EXPECT_EQ(mustParse("9223372036854775808m").milliValue(), kMax);
  EXPECT_EQ(mustParse("-9223372036854775808m").milliValue(), kMin);
  EXPECT_EQ(mustParse("-9223372036854775809m").milliValue(), kMin);

  // BinarySI parses cap at 2^63-1 units; sums may grow past Ei and print in e-notation.
  EXPECT_EQ(mustParse("8Ei"), Quantity::fromValue(kMax));
  EXPECT_EQ(mustParse("100000000Ei"), Quantity::fromValue(kMax));
  Quantity big = mustParse("7Ei");
  big.add(mustParse("7Ei"));
  EXPECT_EQ(big.toString(), "14Ei");
  Quantity beyond_ei = mustParse("1Ei");
  for (int i = 1; i < 1024; ++i) {
    beyond_ei.add(mustParse("1Ei"));
  }
  EXPECT_EQ(beyond_ei.toString(), "1180591620717411303424");  // 2^70 has no binary suffix
  EXPECT_EQ(beyond_ei.format(), Format::BinarySI);
}

// Deterministic pseudo-random and truncated inputs: parsing never crashes, and either succeeds
// with a canonical form that parses back to the same amount, or fails with the standard message.
TEST(Quantity, SurvivesRandomAndTruncatedInput) {
  std::vector<std::string> inputs;
  for (const ParseCase& c : kParseCases) {
    const std::string s(c.input);
    for (size_t n = 0; n <= s.size(); ++n) {
      inputs.push_back(s.substr(0, n));
      inputs.push_back(s.substr(n));
    }
  }
  std::mt19937 rng(42);
  constexpr std::string_view kAlphabet = "0123456789012345.+-eEinumkKMGTPiQx \t\"\\\x01\xff";
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::uniform_int_distribution<size_t> length(0, 24);
  for (int i = 0; i < 5000; ++i) {
    std::string s;
    for (size_t n = length(rng); n > 0; --n) {
      s += kAlphabet[pick(rng)];
    }
    inputs.push_back(std::move(s));
  }
  // Long digit runs around the exponent and precision limits.
  std::uniform_int_distribution<int> exponent(-60, 60);
  for (int i = 0; i < 500; ++i) {
    std::string s = std::to_string(rng()) + std::to_string(rng()) + "." + std::to_string(rng());
    s += "e" + std::to_string(exponent(rng));
    inputs.push_back(std::move(s));
  }

  size_t accepted = 0;
  for (const std::string& input : inputs) {
    SCOPED_TRACE(testing::PrintToString(input));
    auto q = Quantity::parse(input);
    if (!q.ok()) {
      ASSERT_EQ(q.error().message.rfind("invalid quantity \"", 0), 0u) << q.error().message;
      continue;
    }
    ++accepted;
    const std::string canonical = q->toString();
    auto again = Quantity::parse(canonical);
    ASSERT_TRUE(again.ok()) << canonical;
    EXPECT_EQ(*again, *q) << canonical;
    EXPECT_EQ(again->toString(), canonical);
    EXPECT_EQ(again->value(), q->value());
    EXPECT_EQ(again->milliValue(), q->milliValue());
  }
  EXPECT_GT(accepted, 500u);  // the generator must exercise the success path too
}

}  // namespace
}  // namespace berth::resource
