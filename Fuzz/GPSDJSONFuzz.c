// The C side of the gpsd JSON libFuzzer target (Fuzz/GPSDJSONFuzz.swift, built by
// Fuzz/run-gpsd-json.sh). It compiles the shim itself (the snapshot's copy of Sources/CGPS/CGPS.c,
// included so that its static validator is reachable) with -fsanitize=fuzzer-no-link,address, and
// adds two entry points for the harness, declared in the GPSDFuzzC module the runner writes:
//
//   gpsdfuzz_well_formed(line)  CGPS.c's json_well_formed: 1 when `line` is one well-formed JSON object
//   gpsdfuzz_libgps_status(line) libgps's own status for the line (libgps_json_unpack, exported by
//                               libgps but not in gps.h): 0 accepted, -1 no or unknown class, else a
//                               JSON_ERR_* code of gpsd's json.h (declared by CGPS.c)

#include "CGPS.c"

int gpsdfuzz_well_formed(const char *line) { return json_well_formed(line); }

int gpsdfuzz_libgps_status(const char *line) {
    // 24 KB with API 11: not on the stack, and zeroed per call so no state carries over.
    static struct gps_data_t data;
    memset(&data, 0, sizeof(data));
    const char *end = NULL;
    return libgps_json_unpack(line, &data, &end);
}
