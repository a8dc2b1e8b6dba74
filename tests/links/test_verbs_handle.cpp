// The owners of libibverbs objects (src/links/verbs_handle.hpp): each object is closed exactly
// once, through the entry point of the library it came from, whether its owner is destroyed,
// moved, reassigned or reset. A stand-in library records the closes: no RDMA device is needed.
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "links/verbs_handle.hpp"

namespace commcert {
namespace {

struct FakeQueuePair {
  int id = 0;
};

struct Close {
  char library;
  int id;
  bool operator==(const Close&) const = default;
};

std::vector<Close>& closes() {
  static std::vector<Close> seen;
  return seen;
}

// As VerbsLibrary: the entry points are members, loaded at run time.
struct FakeVerbs {
  int (*destroy_qp)(FakeQueuePair*) = nullptr;
};

const FakeVerbs kFirst{[](FakeQueuePair* qp) {
  closes().push_back({'a', qp->id});
  return 0;
}};
const FakeVerbs kSecond{[](FakeQueuePair* qp) {
  closes().push_back({'b', qp->id});
  return 0;
}};

using QueuePair = VerbsHandle<FakeVerbs, FakeQueuePair, &FakeVerbs::destroy_qp>;

class VerbsHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { closes().clear(); }
  FakeQueuePair one_{1};
  FakeQueuePair two_{2};
  FakeQueuePair three_{3};
};

TEST_F(VerbsHandleTest, DestructionClosesTheObjectOnceThroughItsOwnLibrary) {
  {
    const QueuePair first(kFirst, &one_);
    const QueuePair second(kSecond, &two_);
    const QueuePair empty;
    const QueuePair made_empty(kFirst, nullptr);
    EXPECT_TRUE(closes().empty());
    EXPECT_EQ(first.get(), &one_);
    EXPECT_EQ(first->id, 1);
    EXPECT_TRUE(first);
    EXPECT_FALSE(empty);
  }
  EXPECT_EQ(closes(), (std::vector<Close>{{'b', 2}, {'a', 1}}));
}

TEST_F(VerbsHandleTest, AMoveTransfersTheObjectAndItsLibraryAndClosesNothing) {
  {
    QueuePair source(kSecond, &one_);
    QueuePair moved(std::move(source));
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    EXPECT_EQ(moved.get(), &one_);
    EXPECT_TRUE(closes().empty());
  }
  EXPECT_EQ(closes(), (std::vector<Close>{{'b', 1}}));
}

TEST_F(VerbsHandleTest, AssignmentClosesTheTargetsOwnObjectThenOwnsTheOther) {
  {
    QueuePair target(kFirst, &one_);
    QueuePair source(kSecond, &two_);
    target = std::move(source);
    EXPECT_EQ(closes(), (std::vector<Close>{{'a', 1}}));
    EXPECT_EQ(target.get(), &two_);
    target = QueuePair(kFirst, &three_);  // as the transport makes a queue pair per round
    EXPECT_EQ(closes(), (std::vector<Close>{{'a', 1}, {'b', 2}}));
  }
  EXPECT_EQ(closes(), (std::vector<Close>{{'a', 1}, {'b', 2}, {'a', 3}}));
}

TEST_F(VerbsHandleTest, ResetClosesNowAndNeverAgain) {
  {
    QueuePair qp(kFirst, &one_);
    qp.reset();
    EXPECT_FALSE(qp);
    qp.reset();
    EXPECT_EQ(closes(), (std::vector<Close>{{'a', 1}}));
  }
  EXPECT_EQ(closes(), (std::vector<Close>{{'a', 1}}));
}

// What the transport relies on: a device that fails part way through opening releases what was
// already made, in reverse order.
TEST_F(VerbsHandleTest, AThrowPartWayThroughOpeningClosesWhatWasMadeInReverse) {
  struct Opened {
    QueuePair first;
    QueuePair second;
    QueuePair third;
  };
  const auto open = [&] {
    Opened opened;
    opened.first = QueuePair(kFirst, &one_);
    opened.second = QueuePair(kFirst, &two_);
    throw std::runtime_error("the third cannot be made");
  };
  EXPECT_THROW(open(), std::runtime_error);
  EXPECT_EQ(closes(), (std::vector<Close>{{'a', 2}, {'a', 1}}));
}

}  // namespace
}  // namespace commcert
