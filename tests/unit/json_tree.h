/*
 * json_tree.h -- test helpers over jansson trees (test_json.c and the
 * fuzzer): write one with pagehome's writer, compare two, measure depth.
 */
#ifndef PH_TEST_JSON_TREE_H
#define PH_TEST_JSON_TREE_H

#include "base/json_write.h"

#include <jansson.h>
#include <string.h>

/* Write a jansson value with the writer: arrays of scalars compact. */
static inline void ph_test_jw_put(ph_jw *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: ph_jw_null(w); break;
    case JSON_TRUE: ph_jw_bool(w, 1); break;
    case JSON_FALSE: ph_jw_bool(w, 0); break;
    case JSON_INTEGER: ph_jw_int(w, json_integer_value(v)); break;
    case JSON_REAL: ph_jw_double(w, json_real_value(v)); break;
    case JSON_STRING: ph_jw_string(w, json_string_value(v)); break;
    case JSON_ARRAY: {
        int scalars = 1;
        for (size_t i = 0; i < json_array_size(v); i++)
            scalars &= !json_is_array(json_array_get(v, i)) &&
                       !json_is_object(json_array_get(v, i));
        ph_jw_array(w, scalars);
        for (size_t i = 0; i < json_array_size(v); i++)
            ph_test_jw_put(w, json_array_get(v, i));
        ph_jw_end(w);
        break;
    }
    case JSON_OBJECT: {
        const char *key;
        json_t *m;
        ph_jw_object(w, 0);
        json_object_foreach((json_t *)v, key, m) {
            ph_jw_key(w, key);
            ph_test_jw_put(w, m);
        }
        ph_jw_end(w);
        break;
    }
    }
}

/* Equal documents; numbers by value (the writer prints 100.0 as 100,
 * which reads back as an integer). */
static inline int ph_test_json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!ph_test_json_same(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        const char *key;
        json_t *m;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach((json_t *)a, key, m) {
            const json_t *o = json_object_get(b, key);
            if (!o || !ph_test_json_same(m, o))
                return 0;
        }
        return 1;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* Nesting depth of a tree (a scalar is 0). */
static inline size_t ph_test_json_depth(const json_t *v)
{
    size_t d = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t k = ph_test_json_depth(json_array_get(v, i));
            d = k > d ? k : d;
        }
        return d + 1;
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *m;
        json_object_foreach((json_t *)v, key, m) {
            size_t k = ph_test_json_depth(m);
            d = k > d ? k : d;
        }
        return d + 1;
    }
    return 0;
}

#endif
