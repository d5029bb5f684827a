// `nextword bench --products`: the prediction products alone (math/row_products.h,
// in the kernel family in force) against OpenBLAS's sgemm on the same
// shapes, on one thread, timed in turns: the model's own shapes and those of a
// d_model 512 model, for 1 to 128 rows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/config.h"

namespace nextword::cli {

nlohmann::ordered_json bench_products(const Config& config, double seconds);
std::string products_as_text(const nlohmann::ordered_json& report);

}  // namespace nextword::cli
