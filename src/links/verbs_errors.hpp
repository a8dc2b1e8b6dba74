#pragma once

// Failed libibverbs calls as ApiFailure (core/api_error.hpp), like CUDA's and NCCL's
// (comm/cuda_errors.hpp): the call as written, its file:line, what it returned and the error
// number with its text. Only numbers here, no verbs.h, so the formatting is tested on any build.

#include <cerrno>
#include <string>
#include <string_view>

#include "core/api_error.hpp"

namespace commcert {

// What a libibverbs call returned, and errno read right after it, before anything else (a
// message being formatted, an allocation) can change it.
template <typename Result>
struct VerbsOutcome {
  Result result;
  int error_number;
};
// Spelled out for compilers without aggregate deduction (clang before 17, which clang-tidy uses).
template <typename Result>
VerbsOutcome(Result, int) -> VerbsOutcome<Result>;

// The ApiError of a failed libibverbs call: api "libibverbs", `code` the value returned (0 for a
// NULL pointer) and `code_name` that value as text ("NULL", "-1", "22"), `text` the error number,
// its name and its description ("errno 22 (EINVAL): Invalid argument"). `device` is the RDMA
// device or device:port ("mlx5_0:1"); `purpose`, when given, what the call was for.
[[nodiscard]] ApiError verbs_api_error(const CallSite& site, long long returned,
                                       std::string_view returned_text, int error_number,
                                       std::string_view device, std::string_view purpose = {});

// "ibv_reg_mr(...) returned NULL (errno 14 (EFAULT): Bad address)": the call and its result
// alone, for a failure that is one of several reasons (a GPU buffer no way could register).
[[nodiscard]] std::string describe_failed_call(const ApiError& error);

// libibverbs reports an error number two ways: calls that return an int return it (ibv_modify_qp,
// ibv_query_device, ibv_post_send: "0 on success, errno on failure") or return -1 and set errno
// (ibv_query_gid); calls that return a pointer return NULL and set errno. The number is the
// positive value returned, else errno.
[[nodiscard]] constexpr int verbs_error_number(long long returned, int saved_errno) {
  return returned > 0 ? static_cast<int>(returned) : saved_errno;
}

[[noreturn]] void throw_verbs_failure(const CallSite& site, long long returned,
                                      std::string_view returned_text, int error_number,
                                      std::string_view device, std::string_view purpose);

// A call that returns an object: NULL is the failure.
template <typename Object>
Object* check_verbs(VerbsOutcome<Object*> outcome, const CallSite& site, std::string_view device,
                    std::string_view purpose = {}) {
  if (!outcome.result) throw_verbs_failure(site, 0, "NULL", outcome.error_number, device, purpose);
  return outcome.result;
}

// A call that returns 0 on success.
void check_verbs(VerbsOutcome<int> outcome, const CallSite& site, std::string_view device,
                 std::string_view purpose = {});

// A call that returns a count (ibv_poll_cq): a negative value is the failure. Returns the count.
int check_verbs_count(VerbsOutcome<int> outcome, const CallSite& site, std::string_view device,
                      std::string_view purpose = {});

}  // namespace commcert

// The arguments after the call: the device ("mlx5_0:1") and, optionally, what the call was for.
// The braces sequence the call before errno is read.
//
// A libibverbs function called by name (the inline data path of verbs.h: ibv_post_send, ...):
#define COMMCERT_CHECK_VERBS(expression, ...)                            \
  ::commcert::check_verbs(::commcert::VerbsOutcome{(expression), errno}, \
                          COMMCERT_CALL_SITE(expression), __VA_ARGS__)
#define COMMCERT_CHECK_VERBS_COUNT(expression, ...)                            \
  ::commcert::check_verbs_count(::commcert::VerbsOutcome{(expression), errno}, \
                                COMMCERT_CALL_SITE(expression), __VA_ARGS__)
// An entry point of the loaded library (links/verbs_library.hpp): `entry` is the member, named as
// the function without its "ibv_" prefix, and `arguments` its parenthesised arguments, so the
// call site reads "ibv_alloc_pd(context_.get())" as the user knows the call.
#define COMMCERT_CHECK_IBV(library, entry, arguments, ...)                                    \
  ::commcert::check_verbs(::commcert::VerbsOutcome{(library).entry arguments, errno},         \
                          ::commcert::CallSite{"ibv_" #entry #arguments, __FILE__, __LINE__}, \
                          __VA_ARGS__)
