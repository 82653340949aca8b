#pragma once
// Planted: spec includes the model, which its README allows.
#include "scheduler/model/planted.h"
