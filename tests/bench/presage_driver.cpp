// presage_driver: a line-oriented front end to libpresage, for the keystroke
// savings comparison in tests/bench/compare_presage.py.
//
//   presage_driver --config FILE [-k N] [--set KEY=VALUE]... [--show-config]
//
// Reads one query per line on stdin: the text typed so far, trailing spaces
// kept (only the '\n' ending the line is removed). For each line it sets that
// text as presage's past stream (the future stream is empty), calls
// Presage::predict() and writes the suggestions on one line, separated by tabs
// (an empty line when there are none), then flushes. Exactly one output line
// per input line, also when presage throws (the error goes to stderr).
//
// --config FILE  presage XML profile, loaded after presage's own profiles
//                (/etc/presage.xml, ~/.presage/presage.xml), so every key it
//                sets wins over theirs. Required, and it must set
//                Presage.PredictorRegistry.PREDICTORS: otherwise the stock
//                list would be used, whose UserSmoothedNgramPredictor learns
//                into ~/.presage/lm.db.
// -k N           Presage.Selector.SUGGESTIONS (applied after --set).
// --set KEY=VALUE  Presage::config(KEY, VALUE) after loading; "Presage." is
//                prepended to KEY when missing. Applied in a safe order: the
//                *.LEARN keys first, Presage.PredictorRegistry.PREDICTORS
//                last, everything else in between in the order given.
// --show-config  print the effective configuration (KEY<TAB>VALUE lines) on
//                stdout and exit without reading stdin.
//
// Safety: Presage.ProfileManager.AUTOPERSIST is forced to false (presage
// would otherwise save the configuration into the profile on exit). Before a
// DBFILENAME or PREDICTORS change is applied, and once more at the end, every
// SmoothedNgramPredictor that is or becomes active is checked: a learning one
// (LEARN true) must not have its database under /usr, /etc, /var, the home
// directory or ${HOME}; a read-only one must name an existing file (presage
// silently creates an empty database when it cannot open one). The driver
// exits with status 2 before predicting anything when a check fails.
//
// Build: g++ -O2 -o presage_driver presage_driver.cpp -lpresage
#include <presage.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

class StreamCallback : public PresageCallback {
 public:
  std::string past;
  std::string get_past_stream() const override { return past; }
  std::string get_future_stream() const override { return std::string(); }
};

[[noreturn]] void die(const std::string& message, int status = 2) {
  std::cerr << "presage_driver: " << message << std::endl;
  std::exit(status);
}

void usage() {
  std::cerr << "usage: presage_driver --config FILE [-k N] [--set KEY=VALUE]... [--show-config]\n";
}

std::string full_key(const std::string& key) {
  return key.compare(0, 8, "Presage.") == 0 ? key : "Presage." + key;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Value of a configuration variable, or `fallback` when presage has none.
std::string get(const Presage& presage, const std::string& key, const std::string& fallback = "") {
  try {
    return presage.config(key);
  } catch (...) {
    return fallback;
  }
}

bool is_true(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value == "true" || value == "yes" || value == "1" || value == "on";
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> home_dirs() {
  std::vector<std::string> homes;
  if (const char* home = std::getenv("HOME"); home && *home) homes.emplace_back(home);
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && *pw->pw_dir)
    homes.emplace_back(pw->pw_dir);
  return homes;
}

// Why a learning database at `path` is not acceptable, or "" when it is.
std::string unsafe_learning_path(const std::string& path) {
  if (path.find("${HOME}") != std::string::npos || path.find('~') == 0)
    return "it is in the home directory";
  for (const char* system : {"/usr/", "/etc/", "/var/"}) {
    if (starts_with(path, system)) return std::string("it is under ") + system;
  }
  for (const std::string& home : home_dirs()) {
    if (home != "/" && (path == home || starts_with(path, home + "/")))
      return "it is in the home directory " + home;
  }
  if (path.find('/') == std::string::npos)
    return "it is a relative path (would land in the working directory)";
  return "";
}

// Checks the SmoothedNgramPredictor named `name` (a section of
// Presage.Predictors) with its database `db` and learn flag `learn`.
void check_ngram(const std::string& name, const std::string& db, bool learn) {
  if (db.empty()) return;
  if (learn) {
    const std::string why = unsafe_learning_path(db);
    if (!why.empty()) die("refusing to let " + name + " learn into " + db + ": " + why);
  } else if (!file_exists(db)) {
    die(name + ".DBFILENAME " + db +
        " does not exist (presage would create an empty database there)");
  }
}

void check_predictors(const Presage& presage, const std::string& predictors) {
  std::istringstream names(predictors);
  std::string name;
  while (names >> name) {
    const std::string base = "Presage.Predictors." + name + ".";
    if (get(presage, base + "PREDICTOR") != "SmoothedNgramPredictor") continue;
    check_ngram(name, get(presage, base + "DBFILENAME"),
                is_true(get(presage, base + "LEARN", "false")));
  }
}

bool is_active(const Presage& presage, const std::string& predictor) {
  std::istringstream names(get(presage, "Presage.PredictorRegistry.PREDICTORS"));
  std::string name;
  while (names >> name) {
    if (name == predictor) return true;
  }
  return false;
}

void set(const Presage& presage, const std::string& key, const std::string& value) {
  const std::string predictors_key = "Presage.PredictorRegistry.PREDICTORS";
  const std::string sections = "Presage.Predictors.";
  if (key == predictors_key) {
    check_predictors(presage, value);
  } else if (starts_with(key, sections) && ends_with(key, ".DBFILENAME")) {
    const std::string name = key.substr(sections.size(), key.size() - sections.size() - 11);
    if (is_active(presage, name)) {
      check_ngram(name, value, is_true(get(presage, sections + name + ".LEARN", "false")));
    }
  } else if (starts_with(key, sections) && ends_with(key, ".LEARN") && is_true(value)) {
    const std::string name = key.substr(sections.size(), key.size() - sections.size() - 6);
    if (is_active(presage, name))
      check_ngram(name, get(presage, sections + name + ".DBFILENAME"), true);
  }
  try {
    presage.config(key, value);
  } catch (const std::exception& e) {
    die("cannot set " + key + "=" + value + ": " + e.what());
  } catch (...) {
    die("cannot set " + key + "=" + value);
  }
}

void show_config(const Presage& presage) {
  std::vector<std::string> keys = {
      "Presage.PredictorRegistry.PREDICTORS",
      "Presage.Selector.SUGGESTIONS",
      "Presage.Selector.REPEAT_SUGGESTIONS",
      "Presage.Selector.GREEDY_SUGGESTION_THRESHOLD",
      "Presage.ContextTracker.LOWERCASE_MODE",
      "Presage.ContextTracker.ONLINE_LEARNING",
      "Presage.ContextTracker.SLIDING_WINDOW_SIZE",
      "Presage.PredictorActivator.COMBINATION_POLICY",
      "Presage.PredictorActivator.MAX_PARTIAL_PREDICTION_SIZE",
      "Presage.PredictorActivator.PREDICT_TIME",
      "Presage.ProfileManager.AUTOPERSIST",
  };
  std::istringstream names(get(presage, "Presage.PredictorRegistry.PREDICTORS"));
  std::string name;
  while (names >> name) {
    for (const char* field :
         {"PREDICTOR", "DBFILENAME", "DELTAS", "LEARN", "LAMBDA", "N_0", "CUTOFF_THRESHOLD"}) {
      keys.push_back("Presage.Predictors." + name + "." + field);
    }
  }
  for (const std::string& key : keys) {
    try {
      const std::string value = presage.config(key);
      std::cout << key << '\t' << value << '\n';
    } catch (...) {
      // not set for this predictor type
    }
  }
  std::cout.flush();
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_file;
  std::string suggestions;
  std::vector<std::pair<std::string, std::string>> overrides;
  bool show = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        die("missing value for " + arg);
      }
      return argv[++i];
    };
    if (arg == "--config" || arg == "-c") {
      config_file = value();
    } else if (arg == "-k" || arg == "--suggestions") {
      suggestions = value();
      if (suggestions.empty() || suggestions.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(suggestions) < 1) {
        die("-k needs a positive integer");
      }
    } else if (arg == "--set" || arg == "-s") {
      const std::string kv = value();
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) die("--set needs KEY=VALUE, got " + kv);
      overrides.emplace_back(full_key(kv.substr(0, eq)), kv.substr(eq + 1));
    } else if (arg == "--show-config") {
      show = true;
    } else if (arg == "-h" || arg == "--help") {
      usage();
      return 0;
    } else {
      usage();
      die("unknown argument " + arg);
    }
  }
  if (config_file.empty()) {
    usage();
    die("--config FILE is required");
  }
  {
    std::ifstream in(config_file);
    if (!in) die("cannot read " + config_file);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("<Presage") == std::string::npos ||
        text.str().find("<PREDICTORS>") == std::string::npos) {
      die(config_file + " is not a presage profile that sets PredictorRegistry.PREDICTORS");
    }
  }

  StreamCallback callback;
  try {
    Presage presage(&callback, config_file);
    set(presage, "Presage.ProfileManager.AUTOPERSIST", "false");
    check_predictors(presage, get(presage, "Presage.PredictorRegistry.PREDICTORS"));

    // Safe order: LEARN first (so a database is never reopened writable
    // by accident), then the rest as given, the predictor list last.
    const std::string predictors_key = "Presage.PredictorRegistry.PREDICTORS";
    for (int pass = 0; pass < 3; ++pass) {
      for (const auto& [key, val] : overrides) {
        const int key_pass = ends_with(key, ".LEARN") ? 0 : key == predictors_key ? 2 : 1;
        if (key_pass == pass) set(presage, key, val);
      }
    }
    if (!suggestions.empty()) set(presage, "Presage.Selector.SUGGESTIONS", suggestions);
    check_predictors(presage, get(presage, predictors_key));

    if (show) {
      show_config(presage);
      return 0;
    }

    std::ios::sync_with_stdio(false);
    std::string line;
    std::string out;
    while (std::getline(std::cin, line)) {
      callback.past = line;
      out.clear();
      try {
        const std::vector<std::string> words = presage.predict();
        for (size_t j = 0; j < words.size(); ++j) {
          if (j) out += '\t';
          out += words[j];
        }
      } catch (const std::exception& e) {
        std::cerr << "presage_driver: predict failed: " << e.what() << std::endl;
        out.clear();
      } catch (...) {
        std::cerr << "presage_driver: predict failed" << std::endl;
        out.clear();
      }
      out += '\n';
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    die(std::string("presage failed: ") + e.what(), 1);
  } catch (...) {
    die("presage failed", 1);
  }
  return 0;
}
