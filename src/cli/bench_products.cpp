#include "cli/bench_products.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/random.h"
#include "base/threading.h"
#include "cli/bench_timing.h"
#include "math/kernel_paths.h"
#include "math/layers.h"
#include "math/row_products.h"
#include "math/sgemm_peak.h"
#include "math/training_products.h"

namespace nextword::cli {
namespace {

using json = nlohmann::ordered_json;

// One product of a forward pass: rows x K times K x N, or, for the tied
// classifier, rows x K times (N x K)^T.
struct Product {
  const char* name;
  int K, N;
  bool transposed;
};

struct Shapes {
  std::string model;
  std::vector<Product> products;
};

Shapes shapes_of(const std::string& model, int d, int heads_width, int d_ff, int vocab) {
  Shapes s{model, {{"q", d, heads_width, false}, {"o", heads_width, d, false}}};
  if (d_ff > 0) {
    s.products.push_back({"ff_in", d, d_ff, false});
    s.products.push_back({"ff_out", d_ff, d, false});
  }
  s.products.push_back({"classifier", d, vocab, true});
  return s;
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(splitmix64(seed++) % 2001) / 1000.0f - 1.0f;
  return v;
}

}  // namespace

json bench_products(const Config& c, double seconds) {
  set_threading(Threading::kRows, 1);
  const std::vector<Shapes> models = {
      shapes_of("this model", c.d_model, c.n_heads * c.d_k, c.d_ff, c.vocab_size),
      shapes_of("d_model 512", 512, 512, 2048, c.vocab_size)};
  SgemmPeak sgemm;
  double peak = 0;
  json rows = json::array();
  for (const Shapes& model : models) {
    for (const Product& p : model.products) {
      for (const int M : {1, 4, 16, 64, 128}) {
        const std::vector<float> A = random_floats(area(M, p.K), 1);
        const std::vector<float> B = random_floats(area(p.K, p.N), 2);
        std::vector<float> C(area(M, p.N));
        const int ldb = p.transposed ? p.K : p.N;
        auto ours = [&] {
          if (p.transposed) {
            row_product_transposed(M, p.N, p.K, A.data(), p.K, B.data(), ldb, C.data(), p.N);
          } else {
            row_product(M, p.N, p.K, A.data(), p.K, B.data(), ldb, C.data(), p.N);
          }
        };
        auto openblas = [&] {
          training_product(false, p.transposed, M, p.N, p.K, A.data(), p.K, B.data(), ldb, 0.0f,
                           C.data(), p.N);
        };
        // Several in a row, so that the best run of each finds the operands
        // in cache again after the yardstick's large product evicted them.
        const double flops = 2.0 * M * p.N * p.K;
        const int repeats = static_cast<int>(std::max(4.0, 2e7 / flops));
        const auto times = time_in_turns(
            seconds, 3, {{ours, repeats}, {openblas, repeats}, {[&] { sgemm.run(); }, 1}});
        const double gflops = flops / best(times[0]) / 1e9;
        const double sgemm_gflops = flops / best(times[1]) / 1e9;
        peak = std::max(peak, sgemm.flops() / best(times[2]) / 1e9);
        rows.push_back({{"model", model.model},
                        {"product", p.name},
                        {"M", M},
                        {"K", p.K},
                        {"N", p.N},
                        {"gflops", gflops},
                        {"sgemm_gflops", sgemm_gflops},
                        {"ratio", gflops / sgemm_gflops}});
      }
    }
  }
  for (json& row : rows) row["fraction_of_peak"] = row["gflops"].get<double>() / peak;
  return {{"kernels", kernel_path_name(kernel_path())},
          {"threads", 1},
          {"sgemm_peak_gflops", peak},
          {"products", std::move(rows)}};
}

std::string products_as_text(const json& r) {
  std::string out = "kernels      " + r["kernels"].get<std::string>() +
                    " (NEXTWORD_KERNELS: plain, avx2, avx512)\n";
  out += "sgemm peak   " + num(r["sgemm_peak_gflops"].get<double>(), 1) +
         " GFLOPS (1024^3, one thread; timed in turns with each product)\n\n";
  out += "model        product       M      K      N   GFLOPS    sgemm  x sgemm  of peak\n";
  for (const json& p : r["products"]) {
    std::string model = p["model"].get<std::string>(), name = p["product"].get<std::string>();
    model.resize(13, ' ');
    name.resize(10, ' ');
    out += model + name + num(p["M"].get<double>(), 0, 5) + num(p["K"].get<double>(), 0, 7) +
           num(p["N"].get<double>(), 0, 7) + num(p["gflops"].get<double>(), 1, 9) +
           num(p["sgemm_gflops"].get<double>(), 1, 9) + num(p["ratio"].get<double>(), 2, 9) +
           num(100 * p["fraction_of_peak"].get<double>(), 1, 8) + "%\n";
  }
  out.pop_back();
  return out;
}

}  // namespace nextword::cli
