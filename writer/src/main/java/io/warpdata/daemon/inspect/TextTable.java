package io.warpdata.daemon.inspect;

import java.util.ArrayList;
import java.util.List;

/** Rows printed as an aligned text table: a header, a rule, the rows; columns padded to fit. */
public final class TextTable {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    public TextTable(List<String> header) {
        this.header = List.copyOf(header);
    }

    public TextTable add(List<String> row) {
        if (row.size() != header.size()) {
            throw new IllegalArgumentException("row has " + row.size() + " cells, header " + header.size());
        }
        rows.add(List.copyOf(row));
        return this;
    }

    /** The table as text, lines ending in '\n'; {@code withHeader=false} prints rows only. */
    public String render(boolean withHeader) {
        int[] width = new int[header.size()];
        for (int c = 0; c < width.length; c++) {
            width[c] = withHeader ? header.get(c).length() : 0;
            for (List<String> r : rows) {
                width[c] = Math.max(width[c], r.get(c).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        if (withHeader) {
            line(sb, header, width);
            List<String> rule = new ArrayList<>();
            for (int w : width) {
                rule.add("-".repeat(w));
            }
            line(sb, rule, width);
        }
        for (List<String> r : rows) {
            line(sb, r, width);
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, List<String> cells, int[] width) {
        StringBuilder l = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            if (c > 0) {
                l.append("  ");
            }
            l.append(cells.get(c));
            if (c < cells.size() - 1) {
                l.append(" ".repeat(width[c] - cells.get(c).length()));
            }
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }
}
