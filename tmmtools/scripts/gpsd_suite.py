"""The two selection steps of scripts/fetch-gpsd-suite.sh, which runs them on gpsd's regression
suite (its header has the rules; Tests/Fixtures/gpsd-suite.md):

    python3 -m tmmtools.scripts.gpsd_suite nmea SRC DST TABLE
        rule 2: every log in SRC (gpsd's test/daemon) judged by its content; the NMEA 0183 text
        captures copied into DST with their .chk; TABLE (captures.tsv) written: each log's
        verdict, reason and line counts
    python3 -m tmmtools.scripts.gpsd_suite binary SRC PLAYED DST TABLE
        rule 3: for each log TABLE excludes, the drivers gpsd named in PLAYED/NAME.out (what
        gpsfake printed for it); the logs gpsd read with a binary GNSS driver copied into DST
        with their .chk; TABLE rewritten with gpsd's drivers, TPVs and fixes for each log
"""

import json
import os
import shutil
import sys

# gpsd 3.22's drivers whose lexer packet type is a binary GNSS protocol (drivers/*.c).
BINARY = {"u-blox", "SiRF", "Trimble TSIP", "GREIS", "Skytraq", "Navcom NCT", "Motorola Oncore", "Zodiac",
          "iTalk", "GeoStar", "SuperStarII", "EverMore", "Garmin Serial binary", "Garmin USB binary", "NMEA2000"}


def select_nmea(src, dst, table):
    """Rule 2, by content: the NMEA 0183 text captures of SRC to DST, every log's row to TABLE."""
    rows = []
    for name in sorted(os.listdir(src)):
        if not name.endswith(".log"):
            continue
        data = open(os.path.join(src, name), "rb").read()
        lines = [l[:-1] if l.endswith(b"\r") else l for l in data.split(b"\n")]
        body = [l for l in lines if l.strip() and not l.startswith(b"#")]
        nbytes = sum(len(l) for l in body)
        bad = sum(1 for l in body for c in l if c > 0x7E or (c < 0x20 and c != 9))
        nmea = sum(1 for l in body if l[:1] in (b"$", b"!"))
        dollar = sum(1 for l in body if l[:1] == b"$")
        has_chk = os.path.exists(os.path.join(src, name + ".chk"))
        if not body:
            verdict, reason = "excluded", "no data lines"
        elif bad * 5 > nbytes:
            verdict, reason = "excluded", "binary: %d of %d data bytes outside printable ASCII" % (bad, nbytes)
        elif nmea * 2 < len(body):
            verdict, reason = "excluded", "text but not NMEA: %d of %d data lines start with $ or !" % (nmea, len(body))
        elif dollar == 0:
            verdict, reason = "excluded", "AIS only (!AIVDM), no GNSS sentence"
        elif not has_chk:
            verdict, reason = "excluded", "no .chk"
        else:
            verdict, reason = "nmea", "%d of %d data lines are sentences" % (nmea, len(body))
        if verdict == "nmea":
            for f in (name, name + ".chk"):
                shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
        rows.append("\t".join([name, verdict, reason, str(len(body)), str(dollar), str(bad)]))
    with open(table, "w") as out:
        out.write("log\tverdict\treason\tdata_lines\tdollar_lines\tnon_ascii_bytes\n")
        out.write("\n".join(rows) + "\n")


def select_binary(src, played, dst, table):
    """Rule 3, by gpsd's driver: the excluded logs gpsd reads with a binary driver to DST, and
    gpsd's drivers, TPVs and fixes added to every row of TABLE."""
    lines = open(table).read().splitlines()
    out = [lines[0] + "\tgpsd_drivers\tgpsd_tpv\tgpsd_fixes"]
    for line in lines[1:]:
        row = line.split("\t")
        name, verdict = row[0], row[1]
        if verdict != "excluded":
            out.append(line + "\t\t\t")
            continue
        drivers, tpv, fixes = [], 0, 0
        try:
            output = open(os.path.join(played, name + ".out"), "rb").read().splitlines()
        except OSError:
            output = []
        for raw in output:
            if not raw.startswith(b"{"):
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            kind = obj.get("class")
            for device in obj.get("devices", []) if kind == "DEVICES" else [obj] if kind == "DEVICE" else []:
                driver = device.get("driver")
                if driver and (not drivers or drivers[-1] != driver):
                    drivers.append(driver)
            if kind == "TPV":
                tpv += 1
                fixes += (obj.get("mode") or 0) >= 2
        settled = drivers[-1] if drivers else ""
        reason = row[2]
        if settled in BINARY and os.path.exists(os.path.join(src, name + ".chk")):
            row[1] = "binary"
            row[2] = "gpsd driver %s%s; %d TPVs, %d with a fix%s" % (
                settled, " (after %s)" % " > ".join(drivers[:-1]) if len(drivers) > 1 else "", tpv, fixes,
                "" if fixes else "; gpsd makes no fix")
            for f in (name, name + ".chk"):
                shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
        else:
            row[2] = "%s; gpsd driver %s, %d TPVs" % (reason, settled or "none", tpv)
        out.append("\t".join(row + [" > ".join(drivers), str(tpv), str(fixes)]))
    with open(table, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    command, arguments = (argv[0], argv[1:]) if argv else ("", [])
    if command == "nmea":
        select_nmea(*arguments[:3])
    elif command == "binary":
        select_binary(*arguments[:4])
    else:
        sys.exit("usage: python3 -m tmmtools.scripts.gpsd_suite nmea SRC DST TABLE | binary SRC PLAYED DST TABLE")


if __name__ == "__main__":
    main(sys.argv[1:])
