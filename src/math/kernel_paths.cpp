#include "math/kernel_paths.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <string>

#include "base/error.h"

namespace nextword {
namespace {

constexpr KernelPath kAllPaths[] = {KernelPath::kPlain, KernelPath::kAvx2, KernelPath::kAvx512};

#if defined(__x86_64__) && defined(__GNUC__)
// F16C (the halves' conversions), from CPUID: Clang's __builtin_cpu_supports
// does not know it.
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

bool runs_here(KernelPath path) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  switch (path) {
    case KernelPath::kPlain: return true;
    case KernelPath::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
    case KernelPath::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma") && has_f16c();
  }
  return false;
#else
  return path == KernelPath::kPlain;
#endif
}

KernelPath chosen_at_start() {
  const std::vector<KernelPath> here = available_kernel_paths();
  const char* forced = std::getenv("NEXTWORD_KERNELS");
  if (forced == nullptr || *forced == '\0') return here.back();
  std::string names;
  for (KernelPath path : here) {
    if (kernel_path_name(path) == std::string(forced)) return path;
    names += std::string(names.empty() ? "" : ", ") + kernel_path_name(path);
  }
  throw Error(ExitCode::kUsage, std::string("NEXTWORD_KERNELS: \"") + forced +
                                    "\" is not a kernel family this CPU runs (" + names + ")");
}

KernelPath& path_in_force() {
  static KernelPath path = chosen_at_start();
  return path;
}

}  // namespace

KernelPath kernel_path() { return path_in_force(); }

const char* kernel_path_name(KernelPath path) {
  switch (path) {
    case KernelPath::kPlain: return "plain";
    case KernelPath::kAvx2: return "avx2";
    case KernelPath::kAvx512: return "avx512";
  }
  return "plain";
}

std::vector<KernelPath> available_kernel_paths() {
  std::vector<KernelPath> paths;
  for (KernelPath path : kAllPaths) {
    if (runs_here(path)) paths.push_back(path);
  }
  return paths;
}

void set_kernel_path(KernelPath path) { path_in_force() = path; }

float* kernel_scratch(size_t floats) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < floats) scratch.resize(floats);
  return scratch.data();
}

}  // namespace nextword
