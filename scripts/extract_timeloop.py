#!/usr/bin/env python3
"""Copy the Timeloop reference cases into tests/data/timeloop/<case>/ and
extract from each reference.json the numbers the C tests check, so that
they need no JSON parser.  Run from anywhere after the reference data
changes; the output is committed.

Per case this writes model-input.yaml, ERT.yaml and ART.yaml (copies) and
expected.txt, a line-oriented text file.  Every line is a record type
followed by whitespace-separated fields; names never contain blanks; '#'
starts a comment line.  Integers are printed as integers, reals with
Python's repr (shortest round-trip form).  Levels are listed innermost
first, each followed by its ert and ds lines.

  case ID
  summary CYCLES COMPUTES UTILIZATION_PERCENT ENERGY_PJ EDP_J_CYCLE
      UTILIZATION_PERCENT is Timeloop's, rounded to 2 decimals;
      ENERGY_PJ is energy_pJ_from_fJ_per_compute_total (full precision)
  mac NAME INSTANCES UTILIZED_INSTANCES WORD_BITS COMPUTE_PJ ENERGY_TOTAL_PJ
      COMPUTE_PJ is the ERT energy of one compute action;
      ENERGY_TOTAL_PJ is printed with 2 decimals
  bound DIM VALUE             one per problem dimension, in shape order
  level NAME DUMMY SIZE_WORDS WORD_BITS BLOCK_SIZE CLUSTER_SIZE INSTANCES
        MULTIPLE_BUFFERING LEAK_TOTAL_PJ
      DUMMY is 1 for a container that keeps no data space (it only
      carries spatial fanout), else 0; SIZE_WORDS is 0 for unbounded
      (DRAM); LEAK_TOTAL_PJ is printed with 2 decimals
  ert NAME READ_PJ WRITE_PJ UPDATE_PJ LEAK_PJ
      energy per vector action from ERT.yaml (write = fill); absent for
      dummy levels, which have no ERT entry
  ds LEVEL DATASPACE UTILIZED_INSTANCES READS FILLS UPDATES
     TEMPORAL_REDUCTIONS TILE_WORDS PARTITION_WORDS ENERGY_TOTAL_PJ
      one per data space the level keeps (a data space without a ds line
      is bypassed there); counts are words per instance; TILE_WORDS is
      the utilized capacity; ENERGY_TOTAL_PJ (all utilized instances) is
      printed with 2 decimals
  net PARENT CHILD DATASPACE FANOUT MULTICAST_FACTOR SPATIAL_REDUCTIONS
      the network from level PARENT to CHILD (a level or the MAC unit),
      ordered like the levels by PARENT, innermost first
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "..", "..", "shared", "reference", "timeloop")
OUT = os.path.join(HERE, "..", "tests", "data", "timeloop")
COPIED = ("model-input.yaml", "ERT.yaml", "ART.yaml")
DATASPACES = ("Weights", "Inputs", "Outputs")


def value(v):
    """A stats entry that is either a number or {"value": number, ...}."""
    return v["value"] if isinstance(v, dict) else v


def real(x):
    return repr(float(x))


def size_words(size):
    """Timeloop prints "-" for an unbounded level."""
    return 0 if size == "-" else int(size)


def case_lines(ref):
    res = ref["results"]
    s = res["summary"]
    yield "case %s" % ref["case_id"]
    yield "summary %d %d %s %s %s" % (s["cycles"], s["computes"], real(s["utilization_percent"]),
                                     real(s["energy_pJ_from_fJ_per_compute_total"]),
                                     real(s["edp_J_cycle"]))
    mac = res["arithmetic"]
    yield "mac %s %d %d %d %s %s" % (mac["name"], value(mac["specs"]["Instances"]),
                                     mac["stats"]["Utilized instances"], mac["specs"]["Word bits"],
                                     real(mac["ert"]["compute"]),
                                  real(value(mac["stats"]["Energy (total)"])))
    prob = ref["problem"]
    for dim in prob["dimensions"]:
        yield "bound %s %d" % (dim, prob["instance"][dim])
    levels = res["storage_levels_inner_to_outer"]
    for lv in levels:
        sp = lv["specs"]
        dummy = lv["keeps_no_dataspace_(dummy_spatial_container)"]
        yield "level %s %d %d %d %d %d %d %s %s" % (
            lv["name"], int(dummy), size_words(sp["Size"]), sp["Word bits"], sp["Block size"],
            sp["Cluster size"], value(sp["Instances"]), real(sp["Multiple buffering"]),
            real(value(sp["Leakage energy (total)"])))
        ert = lv["ert_energy_pJ_per_vector_action"]
        if ert:
            yield "ert %s %s %s %s %s" % (lv["name"], real(ert["read"]), real(ert["write"]),
                                          real(ert.get("update", ert["write"])),
                                          real(ert["leak"]))
        for ds in DATASPACES:
            d = lv["per_dataspace"].get(ds)
            if d is None:
                continue
            yield "ds %s %s %d %d %d %d %d %d %d %s" % (
                lv["name"], ds, d["utilized_instances_max"], d["reads_per_instance"],
                d["fills_per_instance"], d["updates_per_instance"],
                d["temporal_reductions_per_instance"], d["utilized_capacity_words"],
                d["partition_size"], real(d["energy_total_pJ"]))
    order = {lv["name"]: i for i, lv in enumerate(levels)}
    nets = sorted(res["networks"], key=lambda n: order[n["name"].split(" <==> ")[0]])
    for net in nets:
        parent, child = net["name"].split(" <==> ")
        for ds in DATASPACES:
            d = net["per_dataspace"].get(ds)
            if d is not None:
                yield "net %s %s %s %d %d %d" % (parent, child, ds, d["fanout"],
                                                 d["multicast_factor"], d["spatial_reductions"])


def main():
    index = json.load(open(os.path.join(REF, "index.json")))
    for entry in index:
        src = os.path.join(REF, entry["dir"])
        dst = os.path.join(OUT, entry["case_id"])
        os.makedirs(dst, exist_ok=True)
        for name in COPIED:
            shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
        ref = json.load(open(os.path.join(src, "reference.json")))
        lines = ["# generated by scripts/extract_timeloop.py from %s/reference.json" % entry["dir"]]
        lines += case_lines(ref)
        with open(os.path.join(dst, "expected.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(dst, file=sys.stderr)


if __name__ == "__main__":
    main()
