#pragma once
// Planted: the model includes a header of spec, which its README allows.
#include "scheduler/spec/units.h"
