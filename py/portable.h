// Python objects in a persistent artifact (the compile cache, runtime/disk_cache.h): how a guard
// tree's references, a plan's constants and a graph's metadata are written in one process and
// found again in another.
//
// An object is written by what it is, never by address:
//   Value       a constant marshal writes exactly (None, bool, int, float, complex, str, bytes,
//               Ellipsis, and tuples and frozensets of these), compared by value;
//   Module      a module by name, found in sys.modules (never imported by a load);
//   ModuleDict  a module's namespace, by the module's name;
//   Named       an object a module holds: (module, attribute path) plus the module file's stamp
//               (size and mtime, as .pyc files are checked), and for a function of a module with no
//               file (python -c, a notebook) its code's print; the path must lead to the object
//               itself when it is written, and a load that finds no object there, a module file
//               with another stamp or a function with other code, does not resolve;
//   Tuple       a tuple of portable objects that is not a Value;
//   Adopt       (where the caller allows it) a plain instance, or a code object, reached from the
//               frame: the load gives nothing, and the guard tree binds the object the first frame
//               holds there (a code object only when marshal writes it byte for byte the same).
// Anything else has no portable form: the writer says why, and the artifact is not written.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "common/byte_io.h"

namespace pj::py {

// Writes o (nullptr is written too). false, with *why, when o has no portable form.
bool put_object(ByteWriter& w, PyObject* o, std::string* why, bool allow_adopt = false);
// An Adopt read back: what the object bound later must be.
struct Adoption {
  bool pending = false;
  std::string print;  // a code object's marshal digest; "" for a plain instance
};
// Reads an object back: *out a new reference (nullptr for a written nullptr or an Adopt, which sets
// adopt->pending). false, with *why, when it does not resolve in this process or the stream is
// malformed; no Python exception is left set either way. A *why that starts with "stale" or
// "malformed" can never resolve in this process (a module file changed since it was written); any
// other may later (a module not imported yet, an attribute not set yet).
bool get_object(ByteReader& r, PyObject** out, std::string* why, Adoption* adopt = nullptr);
// While one lives (one artifact's load, under the GIL), a Named read again resolves as it did the
// first time (a model's twenty Dense guards name one class) without looking it up again, and a
// name read again is the same str.
class NamedMemo {
 public:
  NamedMemo();
  ~NamedMemo();
  NamedMemo(const NamedMemo&) = delete;
  NamedMemo& operator=(const NamedMemo&) = delete;
  static NamedMemo* current;
  // (looked up by the reader's bytes as they lie: no copy per name read)
  absl::flat_hash_map<std::string, PyObject*> found;  // the Named's bytes -> the object (owned)
  absl::flat_hash_map<std::string, PyObject*> names;  // a str read back -> the interned str (owned)

 private:
  NamedMemo* outer_;
};

// The constants written as Values (None, bool, int, float, complex, str, bytes, Ellipsis, and
// tuples and frozensets of these), compared by value.
bool is_plain_constant(PyObject* o);

// While one lives (one entry's save, under the GIL, its objects alive), an object written again is
// written as it was the first time, without looking its name up again.
class SaveMemo {
 public:
  SaveMemo();
  ~SaveMemo();
  SaveMemo(const SaveMemo&) = delete;
  SaveMemo& operator=(const SaveMemo&) = delete;
  static SaveMemo* current;
  std::unordered_map<PyObject*, std::string> named;  // object -> its Named encoding ("" none)

 private:
  SaveMemo* outer_;
};

// Whether put_object writes o, where adoption is allowed, as an Adopt of a plain instance.
bool adoptable_instance(PyObject* o);

// Whether o may be bound where an Adopt with this print was written.
bool adoption_fits(const Adoption& a, PyObject* o);

// A digest of a namespace's contents that is the same in every process that built it the same way:
// each name with what it is bound to (a constant's value; a module's, class's or function's name
// and module; otherwise the object's class). Used where a graph relied on a whole namespace being
// unmodified (pijit's own modules) and a later process must know it still is.
uint64_t namespace_digest(PyObject* dict);

// A 64-bit hash that is the same in every process (str hashes are salted per process), fed piece
// by piece, eight bytes per step (a byte-at-a-time FNV was most of a warm start's guard load: every
// method of every class a model's Cells derive from is hashed by name, module and file stamp).
// Not for adversarial input: digests here compare a process's objects with what it wrote itself.
struct StableHash {
  uint64_t h = 0x243f6a8885a308d3ull;
  void word(uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  void bytes(const void* p, size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (; n >= 8; n -= 8, c += 8) {
      uint64_t w;
      std::memcpy(&w, c, 8);
      word(w);
    }
    // The last 0-7 bytes, and their count in the top byte. (Pieces are not framed beyond that:
    // callers separate them, as str() and cstr() do with a separator tag.)
    uint64_t tail = static_cast<uint64_t>(n) << 56;
    for (size_t i = 0; i < n; ++i) tail |= static_cast<uint64_t>(c[i]) << (8 * i);
    word(tail);
  }
  void tag(char t) { word(0x100u | static_cast<unsigned char>(t)); }
  void str(PyObject* u);          // a str's UTF-8, then a separator
  void cstr(const char* p);       // ... a C string's
  void num(int64_t v) { word(static_cast<uint64_t>(v)); }
  uint64_t done() const {
    uint64_t x = h ^ (h >> 33);
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
  }
};
// What o is at the level of names, into h: a constant's value, a module's, class's or function's
// name and module (and a file-less module's function's code), otherwise its class. No attribute
// lookup runs.
void hash_token(StableHash& h, PyObject* o);

// A digest of what a class holds, itself and its bases (heap types only: the others cannot change),
// name by name as namespace_digest reads a namespace: a method patched in (`Mgr.__enter__ = f`)
// changes it. What a guard relies on when it holds a class unmodified, for a later process.
uint64_t class_digest(PyTypeObject* t);

// A code object's identity across processes: the SHA-256 of its marshal bytes (its bytecode,
// constants, names, file and lines), "" when marshal cannot write it.
std::string code_print(PyObject* co);

// size and mtime of the file a module was loaded from ("" for a module without a source file:
// builtin, frozen, an extension whose version the artifact's key fixes).
std::string module_stamp(PyObject* module);

}  // namespace pj::py
