"""`Compare`: several Measurements as PyTorch's table: one table per label, a row per sub-label
(grouped by thread count), a column per description, medians in one unit per table."""
from tensorlib.utils.benchmark.measurement import Measurement, select_unit, trim_sigfig, \
    unit_to_english


def _unique(values):
    return list(dict.fromkeys(values))


class Compare:
    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim = False
        self._colorize = False
        self._highlight_warnings = False

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True      # accepted; the plain-text table carries no colours

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def __str__(self):
        merged = Measurement.merge(self._results)
        return "\n".join(self._table(label, [m for m in merged if m.label == label])
                         for label in _unique(m.label for m in merged))

    def _cell(self, m, scale):
        value = m.median / scale
        text = f"{trim_sigfig(value, m.significant_figures):g}" if self._trim else f"{value:.1f}"
        if self._highlight_warnings and m.has_warnings:
            text += f" (! {m.iqr / m.median * 100:.0f}%)"
        return text

    def _table(self, label, results):
        unit, scale = select_unit(min(m.median for m in results))
        columns = _unique(m.description for m in results)
        sections = _unique(m.num_threads for m in results)
        header = [""] + [c or "" for c in columns]
        body = []            # (section heading or None, cells)
        for threads in sections:
            body.append((f"{threads} threads:", None))
            in_section = [m for m in results if m.num_threads == threads]
            for row in _unique(m.as_row_name() for m in in_section):
                cells = [row]
                for column in columns:
                    hit = [m for m in in_section if m.as_row_name() == row
                           and m.description == column]
                    cells.append(self._cell(hit[0], scale) if hit else "")
                body.append((None, cells))
        rows = [header] + [cells for _, cells in body if cells is not None]
        widths = [max(len(r[i]) for r in rows) + 4 for i in range(len(header))]

        def line(cells):
            first = ("      " + cells[0]).ljust(widths[0] + 4)
            return "|".join([first] + [c.center(widths[i]) for i, c in enumerate(cells)
                                       if i > 0]).rstrip()

        width = len(line(header))
        title = f" {label or ''} "
        dashes = max(width - len(title) - 2, 2)
        out = ["[" + "-" * (dashes // 2) + title + "-" * (dashes - dashes // 2) + "]",
               line(header)]
        for heading, cells in body:
            out.append(heading + " " + "-" * max(width - len(heading) - 1, 0) if heading
                       else line(cells))
        out += ["", f"Times are in {unit_to_english(unit)}s ({unit}).", ""]
        return "\n".join(out)
