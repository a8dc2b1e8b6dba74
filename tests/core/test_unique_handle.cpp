#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/unique_handle.hpp"

namespace commcert {
namespace {

// A CPU-side resource standing in for a CUDA stream or an NCCL communicator: the closes it saw.
std::vector<int>& closed() {
  static std::vector<int> handles;
  return handles;
}

struct FakeTraits {
  using Handle = int;
  static constexpr int kEmpty = 0;
  static void close(int handle) noexcept { closed().push_back(handle); }
};
using FakeHandle = UniqueHandle<FakeTraits>;

class UniqueHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { closed().clear(); }
};

TEST_F(UniqueHandleTest, ClosesWhatItHoldsOnceWhenDestroyed) {
  { const FakeHandle handle(7); }
  { const FakeHandle empty; }
  EXPECT_EQ(closed(), std::vector<int>{7});
}

TEST_F(UniqueHandleTest, AMoveTransfersOwnershipAndClosesNothing) {
  FakeHandle source(3);
  FakeHandle moved(std::move(source));
  EXPECT_TRUE(closed().empty());
  EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(moved.get(), 3);
  FakeHandle target(4);
  target = std::move(moved);
  EXPECT_EQ(closed(), std::vector<int>{4});  // the target's own handle, not the moved one
  EXPECT_EQ(target.get(), 3);
}

TEST_F(UniqueHandleTest, ReleaseGivesUpWithoutClosingAndOutClosesTheOldHandleFirst) {
  FakeHandle handle(5);
  EXPECT_EQ(handle.release(), 5);
  EXPECT_TRUE(closed().empty());
  FakeHandle created(6);
  *created.out() = 8;  // as ncclCommInitRank(&comm, ...) writes through the pointer
  EXPECT_EQ(closed(), std::vector<int>{6});
  EXPECT_EQ(created.get(), 8);
}

// What the communicators rely on: a throw part-way through making several handles closes the
// ones already made, in reverse order, and nothing else.
TEST_F(UniqueHandleTest, AThrowPartWayThroughBuildingClosesWhatWasMade) {
  const auto build = [] {
    std::vector<FakeHandle> made;
    for (int handle = 1; handle <= 3; ++handle) {
      if (handle == 3) throw std::runtime_error("third creation failed");
      made.emplace_back(handle);
    }
  };
  EXPECT_THROW(build(), std::runtime_error);
  EXPECT_EQ(closed(), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace commcert
