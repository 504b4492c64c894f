// The C side of the gpsd JSON libFuzzer target (Fuzz/GPSDJSONFuzz.swift, built by
// Fuzz/run-gpsd-json.sh). It compiles the shim itself (the snapshot's copy of Sources/CGPS/CGPS.c,
// included so that its static validator is reachable) with -fsanitize=fuzzer-no-link,address, and
// adds two entry points for the harness, declared in the GPSDFuzzC module the runner writes:
//
//   gpsdfuzz_well_formed(line)  CGPS.c's json_well_formed: 1 when `line` is one well-formed JSON object
//   gpsdfuzz_libgps_status(line) libgps's own status for the line (libgps_json_unpack, exported by
//                               libgps but not in gps.h): 0 accepted, -1 no or unknown class, else a
//                               JSON_ERR_* code of gpsd's json.h (gps_unpack ignores it)

#include "CGPS.c"

int libgps_json_unpack(const char *, struct gps_data_t *, const char **);

int gpsdfuzz_well_formed(const char *line) { return json_well_formed(line); }

int gpsdfuzz_libgps_status(const char *line) {
    // 24 KB with API 11: not on the stack, and zeroed per call so no state carries over.
    static struct gps_data_t data;
    memset(&data, 0, sizeof(data));
    const char *end = NULL;
    return libgps_json_unpack(line, &data, &end);
}

// gps_unpack's own loop (libgps_sock.c, gpsd 3.22): libgps_json_unpack on each segment of the
// line, from where the last one ended, until it returns -1 or leaves no text. A parse error sets
// `end` to where the error was (or the last attribute's start) and returns its JSON_ERR_* code,
// not -1; when the rest of the line still holds a "class":"<known class>" tag, the next round
// fails at once without moving `end` (JSON_ERR_OBSTART, *end = its own start), and gps_unpack
// spins forever. Replayed here with a progress check: 1 when gps_unpack would never return.
int gpsdfuzz_unpack_hangs(const char *line) {
    static struct gps_data_t data;
    memset(&data, 0, sizeof(data));
    if (line[0] != '{') return 0;
    const char *next = line;
    for (int round = 0; round < 100000; round++) {
        const char *start = next;
        if (libgps_json_unpack(start, &data, &next) == -1) return 0;
        if (next == NULL || next[0] == '\0') return 0;
        if (next <= start) return 1;
    }
    return 1;
}
