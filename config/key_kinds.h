// The kinds of configuration key (true/false, integer in bounds, duration in
// bounds, string, one of a few names), each a function that makes a Key<S>
// (config/key.h) from the key's name, its field and its bounds: how it is read,
// shown and documented follows from the kind. A field is a pointer to member, or a
// generic lambda `[](auto& s) -> auto& { return s.inner.field; }` for nested ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/duration.h"
#include "config/key.h"
#include "config/toml_input.h"

namespace nfsgw::config {

template <typename F, typename S>
decltype(auto) field_of(const F& field, S& section) {
  if constexpr (std::is_member_object_pointer_v<F>) {
    return (section.*field);
  } else {
    return field(section);
  }
}

template <typename T>
struct ValueOf {
  using type = T;
};
/// An optional field is read as its value type and shown "unset" when empty.
template <typename T>
struct ValueOf<std::optional<T>> {
  using type = T;
};

template <typename S>
struct Kinds {
  template <typename F>
  using FieldType = std::remove_cvref_t<decltype(field_of(std::declval<F>(), std::declval<S&>()))>;

  /// A key that fills one field with what `parse` makes of the value.
  template <typename F, typename Parse, typename Show>
  static Key<S> plain(std::string name, std::string type, std::string allowed, std::string meaning, F field,
                      Parse parse, Show show) {
    Key<S> k;
    k.name = std::move(name);
    k.type = std::move(type);
    k.allowed = std::move(allowed);
    k.meaning = std::move(meaning);
    k.read = [field, parse](const Input& in, S& s) { field_of(field, s) = parse(in); };
    k.show = [field, show](const S& s) { return show(field_of(field, s)); };
    k.copy = [field](const S& from, S& to) { field_of(field, to) = field_of(field, from); };
    return k;
  }

  template <typename F>
  static Key<S> boolean(std::string name, F field, std::string meaning) {
    return plain(
        std::move(name), "boolean", "`true`, `false`", std::move(meaning), field,
        [](const Input& in) { return in.boolean(); }, [](bool b) { return std::string(b ? "true" : "false"); });
  }

  /// `check`, when given, refuses values inside the bounds that are still wrong.
  template <typename F>
  static Key<S> integer(std::string name, F field, std::int64_t lo, std::int64_t hi, std::string meaning,
                        void (*check)(const Input&, std::int64_t) = nullptr) {
    using T = FieldType<F>;
    using V = typename ValueOf<T>::type;
    return plain(
        std::move(name), "integer", std::to_string(lo) + ".." + std::to_string(hi), std::move(meaning), field,
        [lo, hi, check](const Input& in) {
          const std::int64_t i = in.integer(lo, hi);
          if (check) check(in, i);
          return T(static_cast<V>(i));
        },
        [](const T& v) {
          if constexpr (std::is_same_v<T, V>) {
            return std::to_string(v);
          } else {
            return v ? std::to_string(*v) : std::string("unset");
          }
        });
  }

  /// In lo..hi, or also "0" (never) when `zero_too`.
  template <typename F>
  static Key<S> duration(std::string name, F field, std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                         std::string meaning, bool zero_too = false) {
    const auto code = [](std::chrono::milliseconds d) { return "`" + quote(format_duration(d)) + "`"; };
    return plain(
        std::move(name), "duration", (zero_too ? "`\"0\"` (never) or " : "") + code(lo) + ".." + code(hi),
        std::move(meaning), field, [lo, hi, zero_too](const Input& in) { return in.duration(lo, hi, zero_too); },
        [](std::chrono::milliseconds d) { return quote(format_duration(d)); });
  }

  /// `check`, when given, refuses strings that are not allowed (`allowed` says which).
  template <typename F>
  static Key<S> text(std::string name, F field, std::string allowed, std::string meaning,
                     void (*check)(const Input&, const std::string&) = nullptr) {
    return plain(
        std::move(name), "string", std::move(allowed), std::move(meaning), field,
        [check](const Input& in) {
          const std::string& s = in.string();
          if (check) check(in, s);
          return s;
        },
        [](const std::string& s) { return quote(s); });
  }

  /// One of `names`; `what` names the kind in messages ("an access mode").
  template <typename F, typename E = FieldType<F>>
  static Key<S> enumeration(std::string name, F field, std::vector<std::pair<std::string, E>> names,
                            std::string what, std::string meaning) {
    std::string list, allowed;
    for (const auto& [n, _] : names) {
      list += (list.empty() ? "" : ", ") + quote(n);
      allowed += (allowed.empty() ? "`" : ", `") + quote(n) + "`";
    }
    return plain(
        std::move(name), "string", allowed, std::move(meaning), field,
        [names, what, list](const Input& in) {
          const std::string& s = in.string();
          for (const auto& [n, e] : names)
            if (n == s) return e;
          in.fail(quote(s) + " is not " + what + "; allowed: " + list);
        },
        [names](E e) {
          for (const auto& [n, v] : names)
            if (v == e) return quote(n);
          return std::string("?");
        });
  }
};

}  // namespace nfsgw::config
