// libfabric, loaded when the ofi driver opens rather than linked into every Sluice program:
// libfabric.so pulls in PSM libraries (libinfinipath, libpsm2) whose constructors install
// SIGSEGV / SIGABRT handlers that print a backtrace and exit(1), so a crashing rank would
// no longer die of its signal (sluicerun reports "killed by signal 6" from the status).
// The handlers in force before the load are put back after it. Only libfabric's few
// exported functions go through here; everything else in its headers is inline calls
// through the objects' operation tables.
#pragma once

#include <rdma/fabric.h>

#include <string>

namespace sluice::drivers::ofi {

// Loads libfabric once; false and `err` when it cannot be (not installed).
bool load(std::string& err);

// The exported functions (valid after load()).
int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info);
void freeinfo(fi_info* info);
fi_info* allocinfo();  // fi_allocinfo()
int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* strerror(int errnum);

}  // namespace sluice::drivers::ofi
