package io.warpdata.daemon.inspect;

/**
 * A {@code where} filter placed in a query as one expression. The text goes into
 * {@code WHERE (<text>\n)}; before that it is scanned as DuckDB reads SQL (string literals with
 * {@code ''}, E-strings with backslash escapes, quoted identifiers, {@code --} and block comments)
 * and refused if a parenthesis closes one it did not open or a {@code ;} ends it: either would let
 * it close the filter and add SQL of its own ({@code 1=1) UNION ALL SELECT ...}), which ignored
 * {@code limit} and gave a rank rows twice. The newline lets a filter end with a {@code --} comment.
 */
public final class FilterText {
    private FilterText() {
    }

    /**
     * @return {@code " WHERE (" + where + "\n)"}
     * @throws TableBatches.BadFilterException if {@code where} is not one expression
     */
    public static String clause(String where) {
        String why = problem(where);
        if (why != null) {
            throw new TableBatches.BadFilterException(where, why);
        }
        return " WHERE (" + where + "\n)";
    }

    /** Why {@code s} cannot be placed as one expression, or null if it can. */
    static String problem(String s) {
        int depth = 0;
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c == '\'') {
                boolean escapes = i > 0 && (s.charAt(i - 1) == 'E' || s.charAt(i - 1) == 'e')
                        && (i < 2 || !Character.isLetterOrDigit(s.charAt(i - 2)) && s.charAt(i - 2) != '_');
                i = endOfQuoted(s, i, '\'', escapes);
                if (i < 0) {
                    return "a string literal is not closed";
                }
            } else if (c == '"') {
                i = endOfQuoted(s, i, '"', false);
                if (i < 0) {
                    return "a quoted name is not closed";
                }
            } else if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
                int nl = s.indexOf('\n', i);
                i = nl < 0 ? n : nl;
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                if (end < 0) {
                    return "a /* comment is not closed";
                }
                i = end + 1;
            } else if (c == '$') {
                return "it holds '$' (dollar-quoted strings and parameters are not taken: write strings in '...')";
            } else if (c == ';') {
                return "it holds ';': a filter is one expression, not statements";
            } else if (c == '(') {
                depth++;
            } else if (c == ')') {
                if (--depth < 0) {
                    return "a ')' closes a parenthesis the filter did not open: a filter is one expression";
                }
            }
        }
        return depth == 0 ? null : depth + " parenthesis(es) are not closed";
    }

    /** The index of the quote closing the one at {@code open} ({@code qq} doubled is a quote), or -1. */
    private static int endOfQuoted(String s, int open, char q, boolean backslashEscapes) {
        for (int i = open + 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (backslashEscapes && c == '\\') {
                i++;
            } else if (c == q) {
                if (i + 1 < s.length() && s.charAt(i + 1) == q) {
                    i++;
                } else {
                    return i;
                }
            }
        }
        return -1;
    }
}
