/* fields.c -- see fields.h. */
#include "tracer/fields.h"

#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>

int tracer_field_u64(const bt_field *f, uint64_t *out)
{
    if (!f)
        return -1;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        *out = bt_field_integer_unsigned_get_value(f);
    else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        *out = (uint64_t)bt_field_integer_signed_get_value(f);
    else if (t == BT_FIELD_CLASS_TYPE_BOOL)
        *out = bt_field_bool_get_value(f);
    else
        return -1;
    return 0;
}

uint64_t tracer_field_u64_or(const bt_field *f, uint64_t dflt)
{
    uint64_t v;
    return tracer_field_u64(f, &v) == 0 ? v : dflt;
}

const char *tracer_field_label(const bt_field *f, char *buf, size_t len)
{
    if (!f)
        return NULL;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (t == BT_FIELD_CLASS_TYPE_STRING)
        return base_printable(bt_field_string_get_value(f), buf, len);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION)) {
        bt_field_class_enumeration_mapping_label_array labels;
        uint64_t n = 0;
        bt_field_enumeration_get_mapping_labels_status st =
            t == BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION
                ? bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n)
                : bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n);
        if (st == BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK && n > 0)
            return base_printable(labels[0], buf, len);
    }
    uint64_t v;
    if (tracer_field_u64(f, &v) != 0)
        return NULL;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        snprintf(buf, len, "#%" PRId64, (int64_t)v);
    else
        snprintf(buf, len, "#%" PRIu64, v);
    return buf;
}

const bt_field *tracer_field_member(const bt_field *f, const char *name)
{
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(f, name);
}
