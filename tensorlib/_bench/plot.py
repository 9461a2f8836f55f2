"""`tensorlib-bench --plot PATH.png`: one horizontal bar per (workload, device), the length
its speed relative to PyTorch from the same run (numpy where PyTorch was not run), on a log
scale centred on 1x so faster and slower read symmetrically."""


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("tensorlib-bench --plot needs matplotlib: pip install matplotlib "
                         "(or the [bench] extra)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_ratios(report, path):
    plt = _pyplot()
    meta = report["meta"]
    key = "vs_torch" if "torch" in meta["libraries"] else "vs_numpy"
    peer = "PyTorch" if key == "vs_torch" else "numpy"
    devices = meta["devices"]
    names = list(dict.fromkeys(r["workload"] for r in report["ratios"]))
    ratio = {(r["workload"], r["device"]): r[key] for r in report["ratios"]}
    height = 0.8 / len(devices)
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * len(names) * max(1, len(devices) * 0.8)),
                           layout="constrained")
    values = [v for v in ratio.values() if v]
    span = max([2.0] + [max(v, 1 / v) for v in values]) * 1.6
    for j, device in enumerate(devices):
        ys = [i + (j - (len(devices) - 1) / 2) * height for i in range(len(names))]
        vs = [ratio.get((n, device)) for n in names]
        bars = ax.barh(ys, [v - 1.0 if v else 0.0 for v in vs], height=height * 0.9,
                       left=1.0, label=device, color=f"C{j}")   # from the 1x line
        for bar, v, y in zip(bars, vs, ys):
            if not v:
                ax.text(1.0, y, " n/a", va="center", fontsize=8)
                continue
            ax.text(v, y, f" {v:.2f}x" if v >= 1 else f"{v:.2f}x ", va="center",
                    ha="left" if v >= 1 else "right", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(1 / span, span)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ticks = [t for t in (0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if 1 / span <= t <= span]
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.grid(axis="x", alpha=0.3)
    where = ("PyTorch runs on cuda beside cuda, on the CPU beside the other devices"
             if peer == "PyTorch" else "numpy runs on the host CPU")
    ax.set_xlabel(f"{peer} time / tensorlib time, same run (right of 1x: tensorlib faster)\n"
                  + where)
    ax.set_title(f"tensorlib {meta['tensorlib']} vs {peer}, median times"
                 f"{' (quick sizes)' if meta['quick'] else ''}, {meta['cores']} cores")
    if len(devices) > 1:
        ax.legend(title="tensorlib device", loc="lower right", fontsize=8)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
