// SPDX-License-Identifier: Apache-2.0
// Attribute structs: equality is on the values as printed (floats by bit pattern), so passes that
// merge equal nodes never merge -0.0 with 0.0, and a graph with a NaN attribute equals itself.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/attrs.h"

namespace spore {
namespace {

struct TestAttrs {
  double f = 0;
  int64_t i = 0;
  std::vector<double> v;
  static constexpr auto fields() {
    return std::make_tuple(field("f", &TestAttrs::f), field("i", &TestAttrs::i), field("v", &TestAttrs::v));
  }
};

TEST(Attrs, EqualityIsBitwiseOnFloats) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(attrs_equal(TestAttrs{1.5, 2, {0.25}}, TestAttrs{1.5, 2, {0.25}}));
  EXPECT_FALSE(attrs_equal(TestAttrs{-0.0, 0, {}}, TestAttrs{0.0, 0, {}}));
  EXPECT_FALSE(attrs_equal(TestAttrs{0, 0, {-0.0}}, TestAttrs{0, 0, {0.0}}));
  EXPECT_TRUE(attrs_equal(TestAttrs{nan, 0, {nan}}, TestAttrs{nan, 0, {nan}}));
  EXPECT_FALSE(attrs_equal(TestAttrs{1, 2, {1, 2}}, TestAttrs{1, 2, {1}}));
  EXPECT_FALSE(attrs_equal(TestAttrs{1, 2, {}}, TestAttrs{1, 3, {}}));
}

enum class Kind : uint8_t { A, B };
struct EnumAttrs {
  Kind kind = Kind::A;
  static constexpr auto fields() { return std::make_tuple(field("kind", &EnumAttrs::kind)); }
};

// Enums print as numbers and parse back; a name, a fraction or a value past the enum's type is a
// clear error, not a symbolic dimension's encoding cast to the enum.
TEST(Attrs, EnumsParseAsNumbersOnly) {
  EXPECT_EQ(attrs_parse<EnumAttrs>(attrs_str(EnumAttrs{Kind::B})).kind, Kind::B);
  for (const char* bad : {"kind=max", "kind=1.5", "kind=256", "kind=-1"}) {
    try {
      attrs_parse<EnumAttrs>(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("enum value"), std::string::npos) << bad << ": " << e.what();
    }
  }
  EXPECT_THROW(attrs_parse<EnumAttrs>("kind="), std::exception);  // "expected a value"
}

}  // namespace
}  // namespace spore
