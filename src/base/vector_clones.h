// Element loops compiled for AVX-512, AVX2 and plain x86-64, the best the CPU
// has picked when the program starts. Where a loop's floating-point order
// must not change with the instruction set (math/, built without fused
// multiply-adds), each clone gives the same bits; integer and bit loops
// (base/half_float.cpp's widening) give the same bits whatever the clone.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NEXTWORD_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NEXTWORD_VECTOR_CLONES
#endif
