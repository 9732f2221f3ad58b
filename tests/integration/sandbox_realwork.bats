#!/usr/bin/env bats
# `sandrun sandbox` doing real work (issue 12: "Real work"): a pandas
# analysis of a CSV in /work that writes a PNG chart, found in the receipt
# with its hash; on the host's /usr (Debian's python3-pandas and
# python3-matplotlib, from install-deps.sh --tests) and on the Debian rootfs
# that contrib/rootfs/debian-python.sh builds (cached; the first build takes
# a few minutes and needs the Debian mirror).

load sandbox_helpers

DEBIAN_PYTHON=$REPO_ROOT/contrib/rootfs/debian-python.sh

# The analysis: the mean temperature per city, a bar chart of it, and a
# summary CSV; prints one line per city.
ANALYSIS='
import sys
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

df = pd.read_csv("/work/data/temperatures.csv", parse_dates=["date"])
means = df.groupby("city")["temp"].mean().sort_index()
means.round(2).to_csv("/work/out/means.csv")
ax = means.plot.bar(title="mean temperature per city")
ax.set_ylabel("deg C")
plt.tight_layout()
plt.savefig("/work/out/chart.png", dpi=80)
for city, t in means.items():
    print(f"{city} {t:.2f}")
print("pandas", pd.__version__, file=sys.stderr)
'

# make_dataset DIR: DIR/data/temperatures.csv (three cities, 90 days) and an
# empty DIR/out, owned by the workdir's owner.
make_dataset() {
	mkdir -p "$1/data" "$1/out"
	"$PY" - "$1/data/temperatures.csv" <<'EOF'
import csv, datetime, sys
with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "city", "temp"])
    day = datetime.date(2026, 1, 1)
    for i in range(90):
        d = day + datetime.timedelta(days=i)
        for city, base in (("Oslo", -2.0), ("Lisbon", 14.0), ("Cairo", 20.0)):
            w.writerow([d.isoformat(), city, base + (i % 10) * 0.5])
EOF
	chown -R "$SB_OWNER:$SB_OWNER" "$1"
}

# check_analysis WORKDIR: the run succeeded, printed the means, and the
# receipt lists the chart (a PNG) and the summary with their hashes.
check_analysis() {
	local w=$1
	assert_success
	assert_no_limit
	assert_rf .stdout $'Cairo 22.25\nLisbon 16.25\nOslo 0.25\n'
	[[ $(head -c 8 "$w/out/chart.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
		fail "out/chart.png is not a PNG"
	assert_file_entry out/chart.png created "$w/out/chart.png"
	assert_file_entry out/means.csv created "$w/out/means.csv"
	# the input is not a change
	assert_rf 'any(.files[]; .path == "data/temperatures.csv")' false
	[[ $(stat -c %u "$w/out/chart.png") == "$SB_OWNER" ]]
}

@test "sandbox real work: a pandas analysis of a CSV on the host's python3 writes a chart listed with its hash" {
	"$PY" -c 'import pandas, matplotlib' 2>/dev/null ||
		fail "python3-pandas and python3-matplotlib are missing (contrib/scripts/install-deps.sh --tests)"
	local w
	w=$(sb_workdir)
	make_dataset "$w"
	sb_run --workdir "$w" --timeout "$(sb_secs 120)" --memory 512M -- python3 -c "$ANALYSIS"
	check_analysis "$w"
	sb_assert_no_leftovers
}

@test "sandbox real work: the same analysis on the Debian rootfs of contrib/rootfs (--rootfs)" {
	local rootfs
	rootfs=$("$DEBIAN_PYTHON") || fail "contrib/rootfs/debian-python.sh failed"
	[[ -x $rootfs/usr/bin/python3 ]] || fail "no python3 in $rootfs"
	local w
	w=$(sb_workdir)
	make_dataset "$w"
	sb_run --rootfs "$rootfs" --workdir "$w" --collect "$BATS_TEST_TMPDIR/collected" \
		--timeout "$(sb_secs 120)" --memory 512M -- python3 -c "$ANALYSIS"
	check_analysis "$w"
	assert_rf '.policy.mounts[] | select(.destination == "/") | .source' "$rootfs"
	cmp "$w/out/chart.png" "$BATS_TEST_TMPDIR/collected/out/chart.png"
	sb_assert_no_leftovers
}
