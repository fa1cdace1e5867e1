/*
 * test_json.c -- the strict JSON reader and the writer (src/base/json.c).
 *
 * Valid documents and what the tree holds; invalid documents with the
 * exact line/col/byte of the error and its wording; the limits (depth,
 * size); the writer's layout, escapes, number formatting and misuse; and
 * write -> read round trips, in memory and through a file.
 */
#include "base/error.h"
#include "base/json.h"

#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_ERR(needle) CHECK_CONTAINS(ph_error_message(), needle)

static ph_json *parse(const char *text)
{
    return ph_json_parse(text, strlen(text), NULL);
}

static void test_scalars(void)
{
    ph_json *v = parse("  true ");
    CHECK(v && v->type == PH_JSON_BOOL && v->boolean == 1);
    ph_json_free(v);
    v = parse("null");
    CHECK(v && v->type == PH_JSON_NULL);
    ph_json_free(v);
    v = parse("-12");
    CHECK(v && v->type == PH_JSON_NUMBER && v->is_int && v->integer == -12);
    ph_json_free(v);
    v = parse("2.5e3");
    CHECK(v && v->number == 2500.0 && !v->is_int);
    ph_json_free(v);
    v = parse("9223372036854775807");
    CHECK(v && v->is_int && v->integer == INT64_MAX);
    ph_json_free(v);
    v = parse("92233720368547758070"); /* beyond int64: a double only */
    CHECK(v && !v->is_int && v->number > 9e19);
    ph_json_free(v);
    v = parse("0");
    CHECK(v && v->is_int && v->integer == 0);
    ph_json_free(v);
    v = parse("1E-2");
    CHECK(v && v->number == 0.01);
    ph_json_free(v);
}

static void test_strings(void)
{
    ph_json *v = parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
    CHECK(v && v->type == PH_JSON_STRING);
    if (v)
        CHECK_STR(v->str, "a\"b\\c/d\b\f\n\r\t");
    ph_json_free(v);
    v = parse("\"\\u00e9\\u20AC\\ud83d\\ude00\"");
    CHECK(v != NULL);
    if (v) {
        CHECK_STR(v->str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
        CHECK_EQ(v->len, 9);
    }
    ph_json_free(v);
    v = parse("\"h\xc3\xa9llo \xf0\x9f\x98\x80\"");
    CHECK(v && v->len == 11);
    ph_json_free(v);
}

static void test_containers(void)
{
    const char *doc = "{\"a\": [1, 2, {\"b\": null}], \"c\": {}, \"d\": []}";
    ph_json *v = parse(doc);
    CHECK(v && v->type == PH_JSON_OBJECT && v->len == 3);
    const ph_json *a = ph_json_get(v, "a");
    CHECK(a && a->type == PH_JSON_ARRAY && a->len == 3);
    CHECK(ph_json_at(a, 1) && ph_json_at(a, 1)->integer == 2);
    CHECK(ph_json_at(a, 3) == NULL);
    CHECK(ph_json_get(ph_json_at(a, 2), "b") &&
          ph_json_get(ph_json_at(a, 2), "b")->type == PH_JSON_NULL);
    CHECK(ph_json_get(v, "c")->len == 0);
    CHECK(ph_json_get(v, "d")->type == PH_JSON_ARRAY);
    CHECK(ph_json_get(v, "zz") == NULL);
    CHECK(ph_json_get(a, "a") == NULL); /* not an object */
    CHECK(ph_json_at(v, 0) == NULL);    /* not an array */
    CHECK_STR(ph_json_type_name(PH_JSON_OBJECT), "object");
    CHECK_STR(ph_json_type_name(PH_JSON_NUMBER), "number");
    ph_json_free(v);
}

typedef struct bad_doc {
    const char *text;
    int line, col;
    const char *msg;
} bad_doc;

static const bad_doc bad_docs[] = {
    {"", 1, 1, "expected a value, found end of input"},
    {"   ", 1, 4, "expected a value, found end of input"},
    {"{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}', found '\"'"},
    {"[1,2,]", 1, 6, "expected a value, found ']'"},
    {"[1 2]", 1, 4, "expected ',' or ']', found '2'"},
    {"{\"a\":1,}", 1, 8, "expected a string key, found '}'"},
    {"{a:1}", 1, 2, "expected a string key, found 'a'"},
    {"[1]\n x", 2, 2, "unexpected 'x' after the document"},
    {"{\n  \"a\" 1\n}", 2, 7, "expected ':', found '1'"},
    {"01", 1, 1, "leading zero in number"},
    {"-", 1, 2, "expected a digit after '-', found end of input"},
    {"-x", 1, 2, "expected a digit after '-', found 'x'"},
    {"1.", 1, 3, "expected a digit after '.'"},
    {"1.e5", 1, 3, "expected a digit after '.'"},
    {"1e", 1, 3, "expected a digit in the exponent"},
    {"1e+", 1, 4, "expected a digit in the exponent"},
    {"1e999", 1, 1, "number out of range"},
    {"-1e999", 1, 1, "number out of range"},
    {"+1", 1, 1, "expected a value, found '+'"},
    {".5", 1, 1, "expected a value, found '.'"},
    {"\"abc", 1, 1, "unterminated string"},
    {"[\"a\\", 1, 4, "unterminated escape"},
    {"\"a\\x\"", 1, 3, "invalid escape '\\x'"},
    {"\"\\u12\"", 1, 2, "expected 4 hex digits after \\u"},
    {"\"\\u12G4\"", 1, 2, "expected 4 hex digits after \\u"},
    {"\"\\uD800\"", 1, 2, "unpaired surrogate \\uD800"},
    {"\"\\uD800\\u0041\"", 1, 2, "unpaired surrogate \\uD800"},
    {"\"\\uDC00\"", 1, 2, "unpaired surrogate \\uDC00"},
    {"\"\\u0000\"", 1, 2, "\\u0000 is not supported"},
    {"\"a\tb\"", 1, 3, "control character 0x09 in string"},
    {"\"\xff\"", 1, 2, "invalid UTF-8 in string"},
    {"\"\xc0\xaf\"", 1, 2, "invalid UTF-8 in string"},         /* overlong */
    {"\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8 in string"},     /* surrogate */
    {"\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8 in string"}, /* > 10FFFF */
    {"\"\xe2\x82\"", 1, 2, "invalid UTF-8 in string"},         /* cut */
    {"tru", 1, 1, "invalid literal (expected 'true')"},
    {"nul", 1, 1, "invalid literal (expected 'null')"},
    {"falsy", 1, 1, "invalid literal (expected 'false')"},
    {"truex", 1, 5, "unexpected 'x' after the document"},
    {"NaN", 1, 1, "expected a value, found 'N'"},
    {"Infinity", 1, 1, "expected a value, found 'I'"},
    {"// c\n1", 1, 1, "expected a value, found '/'"},
    {"{\"a\":1,\"b\":2,\"a\":3}", 1, 14, "duplicate key \"a\""},
    {"[{\"k\":1,\"k\":1}]", 1, 9, "duplicate key \"k\""},
    {"\xef\xbb\xbf{}", 1, 1, "expected a value, found byte 0xef"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad_docs / sizeof bad_docs[0]; i++) {
        const bad_doc *b = &bad_docs[i];
        ph_json_error err;
        char want[160];
        errno = 0;
        ph_json *v = ph_json_parse(b->text, strlen(b->text), &err);
        CHECK(v == NULL);
        ph_json_free(v);
        CHECK_EQ(errno, EINVAL);
        CHECK_EQ(err.line, b->line);
        CHECK_EQ(err.col, b->col);
        if (err.line != b->line || err.col != b->col)
            fprintf(stderr, "  document %zu: %s\n", i, err.msg);
        snprintf(want, sizeof want, "line %d col %d (byte %zu): %s", b->line,
                 b->col, err.offset, b->msg);
        CHECK_CONTAINS(err.msg, want);
        CHECK_STR(ph_error_message(), err.msg);
    }
}

static void test_nul_byte(void)
{
    ph_json_error err;
    ph_json *v = ph_json_parse("[1,\0]", 5, &err);
    CHECK(v == NULL);
    CHECK_CONTAINS(err.msg, "col 4 (byte 3): expected a value, found byte "
                            "0x00");
    v = ph_json_parse("\"a\0\"", 4, &err);
    CHECK(v == NULL);
    CHECK_CONTAINS(err.msg, "control character 0x00");
    v = ph_json_parse(NULL, 0, &err);
    CHECK(v == NULL);
    CHECK_CONTAINS(err.msg, "end of input");
}

static void round_trip(const char *doc, int pretty);

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 1);
    for (int i = 0; i < depth; i++) {
        s[i] = '[';
        s[depth * 2 - 1 - i] = ']';
    }
    s[depth * 2] = '\0';
    return s;
}

static void test_limits(void)
{
    char *ok = nested(PH_JSON_MAX_DEPTH);
    ph_json *v = parse(ok);
    CHECK(v != NULL);
    ph_json_free(v);
    round_trip(ok, 1); /* the writer nests as deep as the reader */
    free(ok);

    char *deep = nested(PH_JSON_MAX_DEPTH + 1);
    ph_json_error err;
    v = ph_json_parse(deep, strlen(deep), &err);
    CHECK(v == NULL);
    CHECK_CONTAINS(err.msg, "col 65 (byte 64): nesting deeper than 64");
    free(deep);

    /* Too large: refused before a byte is read. */
    errno = 0;
    v = ph_json_parse("{}", PH_JSON_MAX_BYTES + 1, &err);
    CHECK(v == NULL);
    CHECK_EQ(errno, EFBIG);
    CHECK_ERR("more than the limit");

    /* Too many values. */
    size_t n = PH_JSON_MAX_VALUES + 1;
    char *many = malloc(n * 2 + 2);
    many[0] = '[';
    for (size_t i = 0; i < n; i++) {
        many[1 + 2 * i] = '0';
        many[2 + 2 * i] = ',';
    }
    many[n * 2] = ']';
    many[n * 2 + 1] = '\0';
    errno = 0;
    v = parse(many);
    CHECK(v == NULL);
    CHECK_EQ(errno, EFBIG);
    CHECK_ERR("more than 1048576 values");
    free(many);
}

/* ---- writer ---- */

static const char *text_of(ph_jw *w)
{
    const char *t = ph_jw_text(w, NULL);
    return t ? t : "(null)";
}

static void test_writer_layout(void)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "a");
    ph_jw_int(&w, -3);
    ph_jw_key(&w, "row");
    ph_jw_array(&w, 1);
    ph_jw_uint(&w, 10);
    ph_jw_double(&w, 0.5);
    ph_jw_object(&w, 0); /* inherits compact */
    ph_jw_key(&w, "k");
    ph_jw_bool(&w, 1);
    ph_jw_end(&w);
    ph_jw_end(&w);
    ph_jw_key(&w, "list");
    ph_jw_array(&w, 0);
    ph_jw_null(&w);
    ph_jw_string(&w, "s");
    ph_jw_end(&w);
    ph_jw_key(&w, "empty");
    ph_jw_array(&w, 0);
    ph_jw_end(&w);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w), "{\n"
                           "  \"a\": -3,\n"
                           "  \"row\": [10, 0.5, {\"k\": true}],\n"
                           "  \"list\": [\n"
                           "    null,\n"
                           "    \"s\"\n"
                           "  ],\n"
                           "  \"empty\": []\n"
                           "}");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "x");
    ph_jw_array(&w, 0);
    ph_jw_int(&w, 1);
    ph_jw_int(&w, 2);
    ph_jw_end(&w);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w), "{\"x\":[1,2]}");
    ph_jw_free(&w);
}

static void test_writer_values(void)
{
    static const struct {
        double v;
        const char *text;
    } nums[] = {
        {0.1, "0.1"}, {100.0, "100"}, {1e300, "1e+300"}, {-2.5, "-2.5"},
        {1.0 / 3.0, "0.3333333333333333"}, {5e-324, "4.94065645841247e-324"}, {0.0, "0"},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        ph_jw w;
        ph_jw_init(&w, 0);
        ph_jw_double(&w, nums[i].v);
        CHECK_STR(text_of(&w), nums[i].text);
        ph_jw_free(&w);
    }
    ph_jw w;
    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0);
    ph_jw_double(&w, NAN);
    ph_jw_double(&w, -INFINITY);
    ph_jw_int(&w, INT64_MIN);
    ph_jw_uint(&w, UINT64_MAX);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w),
              "[null,null,-9223372036854775808,18446744073709551615]");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_string(&w, "q\"b\\n\n\x01\x1f\xc3\xa9\xff-\xe2\x82");
    CHECK_STR(text_of(&w),
              "\"q\\\"b\\\\n\\n\\u0001\\u001f\xc3\xa9\\ufffd-\\ufffd\\ufffd\"");
    ph_jw_free(&w);
}

static void test_writer_misuse(void)
{
    ph_jw w;

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_int(&w, 1); /* value where a key is due */
    ph_jw_end(&w);
    errno = 0;
    CHECK(ph_jw_text(&w, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_ERR("json writer");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0);
    ph_jw_key(&w, "k"); /* key in an array */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_end(&w); /* nothing open */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_int(&w, 1);
    ph_jw_int(&w, 2); /* two top-level values */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "k");
    ph_jw_end(&w); /* key without value */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0); /* never closed */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    CHECK_ERR("not complete");
    ph_jw_free(&w);

    ph_jw_init(&w, 0); /* nothing written */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);
}

/* ---- round trips ---- */

static int json_equal(const ph_json *a, const ph_json *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case PH_JSON_NULL: return 1;
    case PH_JSON_BOOL: return a->boolean == b->boolean;
    case PH_JSON_NUMBER:
        return a->number == b->number &&
               (!a->is_int || !b->is_int || a->integer == b->integer);
    case PH_JSON_STRING:
        return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case PH_JSON_ARRAY:
    case PH_JSON_OBJECT:
        if (a->len != b->len)
            return 0;
        for (size_t i = 0; i < a->len; i++) {
            if (a->keys && strcmp(a->keys[i], b->keys[i]) != 0)
                return 0;
            if (!json_equal(&a->items[i], &b->items[i]))
                return 0;
        }
        return 1;
    }
    return 0;
}

static void round_trip(const char *doc, int pretty)
{
    ph_json *a = parse(doc);
    CHECK(a != NULL);
    if (!a)
        return;
    ph_jw w;
    ph_jw_init(&w, pretty);
    ph_jw_value(&w, a);
    size_t len = 0;
    const char *text = ph_jw_text(&w, &len);
    CHECK(text != NULL);
    ph_json *b = text ? ph_json_parse(text, len, NULL) : NULL;
    CHECK(b && json_equal(a, b));
    ph_json_free(a);
    ph_json_free(b);
    ph_jw_free(&w);
}

static void test_round_trips(void)
{
    const char *docs[] = {
        "{\"a\":[1,-2.5,-2.5e3,1e-300,0.1,123456789012345678],\"b\":{\"c\":[[],{}]}}",
        "[\"\\u00e9\\n\\\"\",true,false,null,\"\\ud83d\\ude00\"]",
        "3.141592653589793",
        "{\"nested\":[[[[1]]]],\"x\":{\"y\":{\"z\":\"w\"}}}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        round_trip(docs[i], 0);
        round_trip(docs[i], 1);
    }
}

static void test_files(void)
{
    char path[] = "/tmp/ph_test_json_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);

    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "n");
    ph_jw_int(&w, 42);
    ph_jw_end(&w);
    CHECK_EQ(ph_jw_write_file(&w, path), 0);
    ph_jw_free(&w);

    ph_json *v = ph_json_parse_file(path, NULL);
    CHECK(v && ph_json_get(v, "n") && ph_json_get(v, "n")->integer == 42);
    ph_json_free(v);

    /* a syntax error in a file names the file */
    FILE *f = fopen(path, "w");
    fputs("{\n \"n\": 1,\n}\n", f);
    fclose(f);
    ph_json_error err;
    CHECK(ph_json_parse_file(path, &err) == NULL);
    CHECK_ERR(path);
    CHECK_ERR("line 3 col 1 (byte 11): expected a string key, found '}'");
    CHECK_CONTAINS(err.msg, "line 3 col 1");
    unlink(path);

    errno = 0;
    CHECK(ph_json_parse_file("/nonexistent/ph.json", &err) == NULL);
    CHECK_EQ(errno, ENOENT);
    CHECK_ERR("/nonexistent/ph.json: cannot open");

    CHECK(ph_json_parse_file("/tmp", &err) == NULL);
    CHECK_ERR("/tmp: cannot read");

    /* write_fd to a closed descriptor fails with a message */
    ph_jw_init(&w, 0);
    ph_jw_null(&w);
    CHECK_EQ(ph_jw_write_fd(&w, -1), -1);
    CHECK_ERR("write to fd -1 failed");
    CHECK_EQ(ph_jw_write_file(&w, "/nonexistent/dir/x.json"), -1);
    CHECK_ERR("/nonexistent/dir/x.json");
    ph_jw_free(&w);
}

int main(void)
{
    test_scalars();
    test_strings();
    test_containers();
    test_errors();
    test_nul_byte();
    test_limits();
    test_writer_layout();
    test_writer_values();
    test_writer_misuse();
    test_round_trips();
    test_files();
    return check_summary("test_json");
}
