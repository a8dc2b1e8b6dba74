#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/reasons.hpp"
#include "validate/rules/rule.hpp"

namespace commcert {
namespace {

TEST(ReasonCatalog, CodesAreUniqueAndEveryRowIsComplete) {
  std::set<std::string_view> seen;
  for (const auto& spec : reason_catalog()) {
    EXPECT_TRUE(seen.insert(spec.code).second) << "duplicate code " << spec.code;
    EXPECT_FALSE(spec.message.empty()) << spec.code;
    EXPECT_FALSE(spec.action.empty()) << spec.code;
  }
  EXPECT_GE(seen.size(), 40u);
}

// The fold derives a node's state from effect and its severity from severity: the two must
// agree, or a quarantined node could carry severity "monitor".
TEST(ReasonCatalog, EffectAndSeverityAgree) {
  for (const auto& spec : reason_catalog()) {
    switch (spec.effect) {
      case Effect::kQuarantine:
        EXPECT_GE(spec.severity, Severity::kTriage) << spec.code;
        break;
      case Effect::kInconclusive:
        EXPECT_EQ(spec.severity, Severity::kUnknown) << spec.code;
        break;
      case Effect::kWarn:
        EXPECT_EQ(spec.severity, Severity::kMonitor) << spec.code;
        break;
    }
  }
}

TEST(ReasonCatalog, LooksUpTheRowOfACode) {
  EXPECT_EQ(reason_spec("collective.wrong_data").effect, Effect::kQuarantine);
  EXPECT_EQ(reason_spec("collective.wrong_data").severity, Severity::kIsolate);
  EXPECT_EQ(reason_spec("evidence.missing").effect, Effect::kInconclusive);
  EXPECT_EQ(reason_spec("health.throttle").effect, Effect::kWarn);
}

// A code outside the catalog cannot become a ReasonCode: the compiler refuses it (the ctest
// `validate.unknown_reason_code_does_not_compile` proves that on a real compile).
static_assert(detail::reason_row("no.such.code") == kReasonCatalog.size());
static_assert(detail::reason_row("collective.wrong_data") < kReasonCatalog.size());
static_assert(ReasonCode("collective.wrong_data") == ReasonCode("collective.wrong_data"));
static_assert(!(ReasonCode("collective.wrong_data") == ReasonCode("evidence.missing")));

TEST(RenderTemplate, ReplacesKnownFieldsAndKeepsUnknownPlaceholders) {
  const ReasonFields fields = {{"where", "gpu 3: "}, {"count", "12"}};
  EXPECT_EQ(render_template("{where}{count} errors", fields), "gpu 3: 12 errors");
  EXPECT_EQ(render_template("{count} of {total}", fields), "12 of {total}");
  EXPECT_EQ(render_template("no fields", fields), "no fields");
  EXPECT_EQ(render_template("unclosed {count", fields), "unclosed {count");
}

TEST(Severity, NamesFollowDcgmVocabulary) {
  EXPECT_EQ(to_string(Severity::kIsolate), "isolate");
  EXPECT_EQ(to_string(Severity::kReset), "reset");
  EXPECT_EQ(to_string(Severity::kTriage), "triage");
  EXPECT_EQ(to_string(Severity::kMonitor), "monitor");
  EXPECT_EQ(to_string(Severity::kUnknown), "unknown");
  EXPECT_LT(Severity::kMonitor, Severity::kTriage);
  EXPECT_LT(Severity::kReset, Severity::kIsolate);
}

// docs/validator.md is where operators look codes and rules up: it must list all of them.
TEST(ReasonCatalog, EveryCodeAndRuleIsDocumented) {
  std::ifstream file(fixtures::source_path("docs/validator.md"));
  std::ostringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  ASSERT_FALSE(doc.empty());
  for (const auto& spec : reason_catalog()) {
    EXPECT_NE(doc.find("`" + std::string(spec.code) + "`"), std::string::npos) << spec.code;
  }
  for (const auto& rule : make_rules()) {
    EXPECT_NE(doc.find("`" + std::string(rule->id()) + "`"), std::string::npos) << rule->id();
  }
}

// A reason's `rule` (the verdict's JSON, docs/validator.md) tells the operator which rule to read
// up: every rule's id must be its own and be a row of the rule table.
TEST(EveryRule, HasItsOwnIdAndARowInTheRuleTable) {
  std::ifstream file(fixtures::source_path("docs/validator.md"));
  std::ostringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  ASSERT_FALSE(doc.empty());
  std::set<std::string> seen;
  for (const auto& rule : make_rules()) {
    const std::string id(rule->id());
    EXPECT_TRUE(seen.insert(id).second) << "two rules share the id '" << id << "'";
    EXPECT_NE(doc.find("| `" + id + "` |"), std::string::npos) << "no row for '" << id << "'";
  }
}

}  // namespace
}  // namespace commcert
