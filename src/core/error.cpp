#include "core/error.hpp"

namespace bootstrap {

int exit_code_for(const Error& error) {
    switch (error.code) {
        case ErrorCode::usage:
        case ErrorCode::invalid_recipe: return 2;
        case ErrorCode::interrupted: return 130;
        default: return 1;
    }
}

}  // namespace bootstrap
