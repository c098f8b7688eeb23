#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""chart.py TABLE.txt OUT.svg: draw the overhead table of file-open.sh as
grouped bars, one group per configuration, one bar per path depth, each
the ratio to no agent minus one (the overhead, in %). Plain SVG, no
plotting library: the benchmark machines have none.

It reads the table's rows ("NAME   NS ns RATIO (SPREAD%) ..." under a line
starting with "configuration"), the first table and the AppArmor guest's
alike; a configuration in both is drawn from the first.

chart.py --calls TABLE.txt OUT.svg: the same for the table of syscalls.sh,
one group per call, one bar per configuration (the floor first, "no agent
again" left out: it only shows that the baseline held). Calls the agent
makes cheaper than no agent (a connect refused before TCP runs) have no bar.
"""
import re
import sys
from xml.sax.saxutils import escape

CELL = re.compile(r"(\d+) ns ([0-9.]+) \(([0-9.]+)%\)")
COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
CALL_CELL = re.compile(r"(\d+) ([0-9.]+) \(([0-9.]+)%\)")


def read_table(path):
    depths, rows, title = [], [], ""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("open+close") and not title:
            title = line
        if line.startswith("configuration"):
            depths = re.findall(r"(\d+) components", line)
            continue
        cells = CELL.findall(line)
        if depths and len(cells) == len(depths):
            name = line[:CELL.search(line).start()].strip()
            # The baselines are the table's business: no bar to draw.
            if not name.startswith("no agent") and name not in [r[0] for r in rows]:
                rows.append((name, [float(c[1]) for c in cells]))
    if not rows:
        sys.exit("chart.py: no table in %s" % path)
    return title, depths, rows


def read_calls(path):
    """syscalls.sh's table: (title, configurations, [(call, [ratio per configuration])])."""
    title, configs, rows = "", [], []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("calls beside open()"):
            title = line
        if line.startswith("call "):
            configs = re.split(r"\s{2,}", line.strip())[2:]
            continue
        cells = CALL_CELL.findall(line)
        if configs and len(cells) == len(configs):
            name = line[:re.search(r"\d+ ns", line).start()].strip()
            rows.append((name, [float(c[1]) for c in cells]))
    if not rows:
        sys.exit("chart.py: no table of calls in %s" % path)
    keep = [i for i, c in enumerate(configs) if c != "no agent again"]
    return (title, [configs[i] for i in keep],
            [(n, [v[i] for i in keep]) for n, v in rows])


def svg(title, depths, rows, heading="Overhead of open()+close() over no agent, by path depth",
        legend="%s components", target_pct=10, target_label="target for governed opens"):
    n = len(depths)
    top = max(max(v) for _, v in rows)
    scale_max = max(0.05, (int((top - 1) * 20) + 1) / 20.0)  # next 5% step
    bar, gap, group_gap = 14, 2, 18
    left, chart_w = 250, 520
    row_h = n * (bar + gap) + group_gap
    height = 70 + len(rows) * row_h + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + chart_w + 80, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14">%s</text>' % escape(heading),
           '<text x="10" y="38" fill="#555">%s</text>' % escape(title)]
    step_x = 130 if n <= 3 else 100
    for i, d in enumerate(depths):
        x = left - 200 + i * step_x if n > 3 else left + i * step_x
        out.append('<rect x="%d" y="48" width="12" height="12" fill="%s"/>'
                   % (x, COLOURS[i % len(COLOURS)]))
        out.append('<text x="%d" y="58">%s</text>' % (x + 16, escape(legend % d)))
    if target_pct is not None:
        x = left + n * step_x
        out.append('<line x1="%d" y1="54" x2="%d" y2="54" stroke="#c44" '
                   'stroke-dasharray="4 3"/>' % (x, x + 14))
        out.append('<text x="%d" y="58">%s</text>' % (x + 18, escape(target_label)))
    y0 = 70
    for step in range(0, int(round(scale_max * 100)) + 1, 5):
        x = left + chart_w * step / (scale_max * 100)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x, y0, x, height - 30))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">+%d%%</text>'
                   % (x, height - 14, step))
    if target_pct is not None:
        target = left + chart_w * target_pct / (scale_max * 100)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c44" '
                   'stroke-dasharray="4 3"/>' % (target, y0, target, height - 30))
    for r, (name, values) in enumerate(rows):
        y = y0 + r * row_h
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (left - 8, y + row_h / 2, escape(name)))
        for i, v in enumerate(values):
            w = max(0.0, chart_w * (v - 1) / scale_max)
            by = y + i * (bar + gap)
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                       % (left, by, w, bar, COLOURS[i % len(COLOURS)]))
            out.append('<text x="%.1f" y="%d" fill="#333">%+.1f%%</text>'
                       % (left + w + 4, by + bar - 3, (v - 1) * 100))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    calls = args[:1] == ["--calls"]
    if calls:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: chart.py [--calls] TABLE.txt OUT.svg")
    if calls:
        title, configs, rows = read_calls(args[0])
        out = svg(title, configs, rows, heading="Overhead of calls beside open() over no agent, "
                  "by configuration", legend="%s", target_pct=None)
    else:
        out = svg(*read_table(args[0]))
    with open(args[1], "w", encoding="utf-8") as f:
        f.write(out)


if __name__ == "__main__":
    main()
