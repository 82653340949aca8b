#pragma once
// Planted: the store's folder is allowed, its SQL header is not.
#include "scheduler/store/store.h"
#include "scheduler/store/sqlite_db.h"
