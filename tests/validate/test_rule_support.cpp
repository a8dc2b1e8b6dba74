// The helpers rules build their findings with (validate/rules/support.hpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "validate/rules/support.hpp"

namespace commcert {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// A field a message template reads is replaced where it is, never added twice; a new one is
// appended. Templates take the first field of a name, so a second copy would be ignored.
TEST(SupportRules, SetFieldReplacesTheNamedFieldOrAppendsIt) {
  Finding f;
  f.fields = {{"a", "1"}, {"b", "2"}};
  rules::set_field(f, "b", "3");
  EXPECT_EQ(f.fields, (Fields{{"a", "1"}, {"b", "3"}}));
  rules::set_field(f, "c", "4");
  EXPECT_EQ(f.fields, (Fields{{"a", "1"}, {"b", "3"}, {"c", "4"}}));
  rules::set_field(f, "a", "5");
  EXPECT_EQ(f.fields, (Fields{{"a", "5"}, {"b", "3"}, {"c", "4"}}));
}

}  // namespace
}  // namespace commcert
