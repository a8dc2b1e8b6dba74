#pragma once

// What a rule's file includes. Each rule is a class in its own file with one factory,
// rules::make_<name>_rule(), which registry.cpp declares and lists in its table: adding a rule
// touches its own file and that table (and a limit it reads is declared in its file too,
// Rule::gpu_limits).

#include <memory>

#include "validate/rules/rule.hpp"
