// Names of error codes; what value() of an error says.
#include "tactus/core/result.hpp"

#include <cstdio>
#include <cstdlib>

namespace tactus {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadParameter: return "bad parameter";
    case ErrorCode::kParse: return "parse error";
    case ErrorCode::kValidation: return "invalid graph";
    case ErrorCode::kVerification: return "schedule verification failed";
    case ErrorCode::kIncompatible: return "incompatible format";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kAlreadyExists: return "already exists";
    case ErrorCode::kInvalidState: return "invalid state";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kInfeasible: return "infeasible";
    case ErrorCode::kPeerDied: return "peer died";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown error";
}

void abortOnErrorValue(const Error& error) {
  std::fprintf(stderr,
               "tactus: value() of a Result that holds an error (%s): %s\n"
               "tactus: aborting; check the Result first where this can fail: "
               "if (!r) { use r.error().message }\n",
               errorCodeName(error.code), error.message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tactus
