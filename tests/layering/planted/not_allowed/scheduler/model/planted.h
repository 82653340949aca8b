#pragma once
// Planted: the model including the store, which its README forbids.

#include "scheduler/store/store.h"
#include "scheduler/common/result.h"
