// The compiler's front end: an STM-format YAML graph (Version 2.0.0 or 3.0.0) to a checked Graph.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graph.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler {

/// Options of the parser; none yet (kept so that callers need not change when some appear).
struct ParseOptions {};

/// The largest graph (or WCET side file) read from disk: 1 GiB, ten times a generated graph
/// of a million runnables.
inline constexpr std::uint64_t kMaxGraphFileBytes = 1ULL << 30;

/// Parses and checks a graph. `origin` names the text in messages (`graph.yaml:42: ...`) and
/// becomes Graph::sourceFile; Graph::sourceHash is the FNV-1a hash of the bytes. Every rule of
/// the model (stm-model.md section 2) is checked: YAML syntax errors, unknown keys and wrong
/// types give ErrorCode::kParse, broken rules ErrorCode::kValidation. Never throws.
Result<Graph> parseGraph(std::string_view yamlText, const std::string& origin, const ParseOptions& options = {});

/// Reads a file and parses it with parseGraph (origin = path); an unreadable file is kIo.
Result<Graph> parseGraphFile(const std::string& path, const ParseOptions& options = {});

}  // namespace tactus::compiler
