#pragma once
// Planted: placement is named in the rule's paragraph, but after its first sentence.
#include "scheduler/common/result.h"
#include "scheduler/placement/placement.h"
