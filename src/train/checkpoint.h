// The files a training run keeps in its directory: the model (vocab.json,
// weights.json, and weights.safetensors when there is one) and
// checkpoint.json, everything else a resumed run needs to continue exactly
// where it stopped (options, progress, AdamW's moments). Each is written
// atomically, the model first, so a checkpoint never points past the weights
// on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "train/trainer.h"

namespace nextword {

// What checkpoint.json records besides the tensors.
struct RunRecord {
  TrainOptions options;
  int step = 0;                       // steps done
  double elapsed_seconds = 0;         // of training, over every process of the run
  std::vector<int64_t> corpus_bytes;  // per corpus file: a changed file cannot be resumed
  int ranks = 1;                      // processes of the run (mpirun -np); 1 in older files
};

// vocab.json and weights.json; and weights.safetensors when the directory
// has one, since `--model DIR` reads that first and must not find it stale.
void save_trained_model(const Model& model);

// The model, then checkpoint.json in record.options.out_dir: the record, the
// vocabulary, the parameters and AdamW's moments m and v (arenas laid out
// like model.weights.values()).
void save_checkpoint(const RunRecord& record, const Model& model, const std::vector<float>& m,
                     const std::vector<float>& v);

// checkpoint.json of `dir`, read back. Throws Error(kIo) when there is none,
// Error(kUsage) when it was saved by another number of mpirun's ranks than
// this run has, model_error when it is not a valid checkpoint.
class Checkpoint {
 public:
  explicit Checkpoint(const std::string& dir);

  RunRecord record;  // options.out_dir is `dir`
  std::vector<std::string> vocab;

  // Copies tensor `field` ("params", "adam_m" or "adam_v") into out[n];
  // model_error unless it holds n float32 values.
  void restore(const char* field, float* out, size_t n) const;
  // How many float32 values tensor `field` holds, read from its length
  // alone: checked before anything is allocated. model_error unless it is a
  // string.
  int64_t stored_floats(const char* field) const;

 private:
  // model_error unless the options obey the command line's rules and the
  // vocabulary and tensor sizes agree with them.
  void check() const;
  // The base64 text of tensor `field`; model_error unless it is a string.
  const std::string& tensor_text(const char* field) const;

  std::string file_;
  nlohmann::json json_;
};

// Temporary files of a run that was killed while writing (FILE.tmp.PID, see
// write_file_atomically): never read, so removed when a run starts.
void remove_stale_temporaries(const std::string& dir);

}  // namespace nextword
