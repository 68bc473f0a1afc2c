// The declaration of every configuration key, section by section: its TOML name,
// the field it fills, how it is read and checked, what the docs say of it and
// whether `nfsgw reload` may change it. The loader (load_config.cpp), the reload
// plan (reload_plan.cpp) and the docs' key lists (key_docs.cpp) all walk these
// tables, so a key is written down once (the tables: server_keys.cpp,
// cache_keys.cpp, export_keys.cpp; the kinds of key: key_kinds.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.h"

namespace nfsgw::config {

class Input;  // config/toml_input.h

/// What a reload does with a changed value.
enum class Reload {
  Live,      // applies at once
  Restart,   // reported; the running value is kept until a restart
  Identity,  // names the export: a changed value is an export removed and one added
};

template <typename Section>
struct Key {
  std::string name;  // as written in the file
  Reload reload = Reload::Restart;
  // The docs' columns (docs/configuration.md): the default comes from a
  // default-constructed section through `show` unless `default_text` says more.
  std::string type;
  std::string default_text;
  std::string allowed;
  std::string meaning;
  /// Reads the key's value, present in the file, into the section; throws
  /// ConfigError when it is not allowed.
  std::function<void(const Input&, Section&)> read;
  /// For a key left out of the file: empty keeps the field's default.
  std::function<void(const Input&, Section&)> absent;
  /// The value as TOML spells it, for reload messages and the docs.
  std::function<std::string(const Section&)> show;
  /// Copies this key's value, and what is derived from it, between sections.
  std::function<void(const Section& from, Section& to)> copy;

  Key&& at_once() && {
    reload = Reload::Live;
    return std::move(*this);
  }
  Key&& also_allowed(const std::string& more) && {
    allowed += more;
    return std::move(*this);
  }
  Key&& defaults_to(std::string text) && {
    default_text = std::move(text);
    return std::move(*this);
  }
};

template <typename Section>
struct SectionKeys {
  std::string name;  // "server", "cache", "export"
  std::vector<Key<Section>> keys;
  /// Rules between keys and values derived from several, once every key is read
  /// (the table as an Input, absent when the file has none); may be empty.
  std::function<void(const Input&, Section&)> finish;
};

const SectionKeys<ServerConfig>& server_keys();
const SectionKeys<CacheConfig>& cache_keys();
const SectionKeys<ExportConfig>& export_keys();

}  // namespace nfsgw::config
