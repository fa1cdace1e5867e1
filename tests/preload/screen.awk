# screen.awk -- what a terminal shows for a byte stream with "\r" (back to
# column 0) and ESC [ K (erase to the end of the line): one output line per
# input line.  check_life.sh reads the progress line with it.
{
    line = $0; buf = ""; col = 0; n = length(line); i = 1
    while (i <= n) {
        c = substr(line, i, 1)
        if (c == "\r") { col = 0; i++; continue }
        if (c == "\033" && substr(line, i, 3) == "\033[K") { buf = substr(buf, 1, col); i += 3; continue }
        if (col >= length(buf)) buf = buf c; else buf = substr(buf, 1, col) c substr(buf, col + 2)
        col++; i++
    }
    print buf
}
