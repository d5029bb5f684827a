#include "lsp/settings.h"

#include <algorithm>

#include "complete/settings.h"

namespace nextword::lsp {
namespace {

using nlohmann::json;

// Sets one completer option from a JSON value, by its key.
struct SetOption {
  const std::string& key;
  const json& value;
  std::string& problem;  // set when the value does not fit
  bool found = false;

  void whole(const char*, const char* name, int& target, int low, int high, const char*) {
    if (key != name) return;
    found = true;
    if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high) {
      problem = "not a whole number from " + std::to_string(low) + " to " + std::to_string(high);
      return;
    }
    target = value.get<int>();
  }
  void flag(const char*, const char* name, bool& target, const char*) {
    if (key != name) return;
    found = true;
    if (!value.is_boolean()) {
      problem = "not true or false";
      return;
    }
    target = value.get<bool>();
  }
  void number(const char*, const char* name, double& target, double low, double high, const char*) {
    if (key != name) return;
    found = true;
    if (!value.is_number() || value.get<double>() < low || value.get<double>() > high) {
      problem = "not a number from " + json(low).dump() + " to " + json(high).dump();
      return;
    }
    target = value.get<double>();
  }
};

// Every key a setting may have, for a message naming them.
std::string known_keys() {
  struct Names {
    std::string all;
    void add(const char* key) { all += (all.empty() ? "" : ", ") + std::string(key); }
    void whole(const char*, const char* key, int&, int, int, const char*) { add(key); }
    void flag(const char*, const char* key, bool&, const char*) { add(key); }
    void number(const char*, const char* key, double&, double, double, const char*) { add(key); }
  } names;
  CompleteOptions o;
  visit_complete_options(o, names);
  return names.all + ", history, languages, trigger-characters";
}

}  // namespace

bool Settings::enabled_for(const std::string& language) const {
  return std::any_of(languages.begin(), languages.end(),
                     [&](const std::string& l) { return l == "*" || l == language; });
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
    start = end + 1;
  }
  return items;
}

std::vector<std::string> apply_settings(const json& object, const std::string& where,
                                        Settings& settings) {
  std::vector<std::string> problems;
  if (object.is_null()) return problems;
  const json* source = &object;
  std::string at = where;
  if (object.is_object() && object.contains("nextword")) {
    source = &object["nextword"];
    at += ".nextword";
  }
  if (!source->is_object()) {
    problems.push_back(at + ": not an object of settings");
    return problems;
  }
  Settings next = settings;
  for (const auto& [key, value] : source->items()) {
    std::string problem;
    if (key == "languages") {
      if (value.is_string()) {
        next.languages = split_list(value.get<std::string>());
      } else if (value.is_array() && std::all_of(value.begin(), value.end(),
                                                 [](const json& v) { return v.is_string(); })) {
        next.languages = value.get<std::vector<std::string>>();
      } else {
        problem = "not a list of languageIds";
      }
    } else if (key == "history") {
      if (value.is_string()) {
        next.history = value.get<std::string>();
      } else {
        problem = "not a file name";
      }
    } else if (key == "trigger-characters") {
      if (value.is_string()) {
        next.trigger_characters = value.get<std::string>();
      } else {
        problem = "not a string of characters";
      }
    } else {
      SetOption set{key, value, problem};
      visit_complete_options(next.complete, set);
      if (!set.found) problem = "unknown setting (settings: " + known_keys() + ")";
    }
    if (!problem.empty()) problems.push_back(at + "." + key + ": " + problem);
  }
  if (const std::string problem = complete_options_problem(next.complete, ""); !problem.empty()) {
    problems.push_back(at + ": " + problem + "; these settings are not applied");
    return problems;
  }
  settings = next;
  return problems;
}

}  // namespace nextword::lsp
