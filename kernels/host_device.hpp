#pragma once

// Functions marked COMMCERT_HD compile for the GPU under nvcc and as plain C++ elsewhere, so the
// logic a kernel runs is the logic the CPU tests check.
#if defined(__CUDACC__)
#define COMMCERT_HD __host__ __device__
#else
#define COMMCERT_HD
#endif
