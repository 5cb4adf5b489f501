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
        rows.add(row.stream().map(TextTable::oneLine).toList());
        return this;
    }

    /**
     * A cell on one line: a newline, tab or other control character in a value (a text column
     * holding a paragraph) is shown escaped ({@code \n}, {@code \t}, {@code \x1b}), so that
     * each row stays one line and the columns stay aligned.
     */
    static String oneLine(String cell) {
        if (cell == null) {
            return "NULL";
        }
        StringBuilder b = null;
        for (int i = 0; i < cell.length(); i++) {
            char ch = cell.charAt(i);
            if (ch >= 0x20 && ch != 0x7f) {
                if (b != null) {
                    b.append(ch);
                }
                continue;
            }
            if (b == null) {
                b = new StringBuilder(cell.length() + 8).append(cell, 0, i);
            }
            b.append(switch (ch) {
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                default -> String.format("\\x%02x", (int) ch);
            });
        }
        return b == null ? cell : b.toString();
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
