#pragma once
#include "scheduler/model/planted.h"
