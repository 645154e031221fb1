/* seqdata.h -- the data sources of the sequence and generative workloads:
 * parallel text (seq2seq), bAbI stories (memnet), feature frames (speech)
 * and digit images (autoenc). Each has a deterministic generator with
 * learnable structure and, where the format is simple, a loader for the
 * real format. Loaders treat files as untrusted: a malformed file is a
 * one-line error (exec_errmsg) naming the file and line, never a crash. */
#ifndef FATHOM_MODELS_SEQDATA_H
#define FATHOM_MODELS_SEQDATA_H
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads a whole file (at most max_bytes) into a NUL-terminated buffer the
 * caller frees with base_free; a clear error if missing, unreadable or too
 * large. (text.c) */
exec_status model_seq_read_file(const char *path, size_t max_bytes, char **buf, size_t *len);

/* ---- parallel text (text.c) --------------------------------------------- */
/* Token ids as in TensorFlow's translate example: the specials come first,
 * then words by decreasing frequency (so a log-uniform sampler fits). */
enum { MODEL_TEXT_PAD = 0, MODEL_TEXT_GO = 1, MODEL_TEXT_EOS = 2, MODEL_TEXT_UNK = 3, MODEL_TEXT_FIRST = 4 };

typedef struct model_text_corpus {
    int n;                /* sentence pairs */
    int src_len, tgt_len; /* encoder steps; decoder steps (target + EOS fit) */
    int src_vocab, tgt_vocab;
    int32_t *src; /* [n, src_len]: source tokens, PAD after the end */
    int32_t *tgt; /* [n, tgt_len]: target tokens, EOS, then PAD */
} model_text_corpus;

/* A synthetic translation task: source sentences of Zipf-distributed words;
 * the target maps each word through a fixed bijection between the two
 * vocabularies and swaps every adjacent pair (local reordering), then EOS.
 * Needs tgt_len > src_len and vocabularies of at least 8 words. */
exec_status model_text_synth(int n, int src_len, int tgt_len, int src_vocab, int tgt_vocab, uint64_t seed,
                             model_text_corpus **out);
/* The reference mapping of the synthetic task (for tests): target of `len`
 * source tokens, EOS included; returns the target length. */
int model_text_synth_translate(const int32_t *src, int len, int src_vocab, int tgt_vocab, int32_t *tgt);
/* Parallel text: one sentence per line in each file, whitespace-separated
 * tokens, line i of one the translation of line i of the other. The
 * vocabularies (at most src_vocab / tgt_vocab ids with the specials) are
 * built from the files by frequency; rarer words become UNK. Pairs longer
 * than src_len / tgt_len - 1 tokens are skipped, as TF's largest bucket does. */
exec_status model_text_load(const char *src_path, const char *tgt_path, int src_len, int tgt_len, int src_vocab,
                            int tgt_vocab, model_text_corpus **out);
void model_text_destroy(model_text_corpus *c);
/* An all-PAD corpus of n pairs (for loaders and generators). */
exec_status model_text_corpus_new(int n, int src_len, int tgt_len, int src_vocab, int tgt_vocab,
                                  model_text_corpus **out);

/* ---- token tasks for the Transformer (tokens.c) ------------------------- */
/* The copy task (or, with reverse, the reversal task) over one shared
 * vocabulary: each source is 1 to len-1 random words (ids MODEL_TEXT_FIRST
 * and up, lengths uniform in [len/2, len-1]) then EOS, PAD after; its target
 * the same words (reversed) then EOS. src_len = tgt_len = len; needs
 * len >= 3 and vocab >= MODEL_TEXT_FIRST + 2. Deterministic for the seed. */
exec_status model_tokens_copy_task(int n, int len, int vocab, bool reverse, uint64_t seed, model_text_corpus **out);
/* Tokenized parallel text, as subword tokenizers write it: one sentence
 * pair per line, the source's token ids, then " ||| " or a tab, then the
 * target's; ids are decimal integers >= 0 separated by spaces. Each id is
 * stored as id + MODEL_TEXT_FIRST (0-3 are PAD, GO, EOS, UNK); ids of
 * vocab - MODEL_TEXT_FIRST and more become UNK. Each side gets an EOS; pairs
 * longer than src_len - 1 or tgt_len - 1 tokens are skipped; blank lines
 * too. Anything else is a one-line error naming the file and line. */
exec_status model_tokens_load(const char *path, int src_len, int tgt_len, int vocab, model_text_corpus **out);

/* ---- bAbI (babi.c) ------------------------------------------------------ */
typedef struct model_babi_set {
    int n;            /* questions */
    int mem;          /* memory slots */
    int sent_len;     /* words per sentence (and per query) */
    int vocab;        /* word ids 1..vocab-1; 0 is the nil word */
    int nsent;        /* statements, all stories */
    int32_t *sents;   /* [nsent, sent_len]: the statements, in the text's order */
    int32_t *recent;  /* [n]: each question's most recent statement, an index in sents */
    int32_t *count;   /* [n]: its memory's statements (at most mem): sents[recent], sents[recent - 1], ... */
    int32_t *queries; /* [n, sent_len] */
    int32_t *answers; /* [n] */
    char **words;     /* [vocab]: words[0] = "<nil>" */
} model_babi_set;

/* Parses bAbI text ("1 Mary moved to the bathroom.", "3 Where is Mary?\tbathroom\t1");
 * `name` labels error messages. */
exec_status model_babi_parse(const char *text, size_t len, const char *name, int mem, model_babi_set **out);
/* Question q's memory into out [mem, sent_len]: slot 0 its story's most
 * recent statement before it, then older ones; the slots past its story's
 * start nil (0). */
void model_babi_memory(const model_babi_set *s, int q, int32_t *out);
exec_status model_babi_load(const char *path, int mem, model_babi_set **out);
/* Task-1 style stories ("Mary moved to the bathroom. ... Where is Mary?"),
 * written in the bAbI format and parsed back. */
exec_status model_babi_generate(int nstories, uint64_t seed, int mem, model_babi_set **out);
/* The generator's text (for tests and `--data` round trips); caller frees
 * with base_free. */
char *model_babi_generate_text(int nstories, uint64_t seed, size_t *len);
int model_babi_word(const model_babi_set *s, const char *word); /* id or -1 */
void model_babi_destroy(model_babi_set *s);

/* ---- digit images (mnist.c) --------------------------------------------- */
typedef struct model_mnist_set {
    int n, rows, cols;
    float *images;   /* [n, rows*cols] in [0, 1] */
    uint8_t *labels; /* [n], or NULL when loaded without labels */
} model_mnist_set;

/* Synthetic 28x28 digits: stroke skeletons of 0-9 under a random affine
 * map, stroke width and noise, anti-aliased; drawn on `threads` OpenMP
 * threads (the same images for any number). */
exec_status model_mnist_generate(int n, uint64_t seed, int threads, model_mnist_set **out);
/* MNIST idx files: images (magic 0x00000803, u8 [n, rows, cols]) and
 * optionally labels (magic 0x00000801, u8 [n]); labels_path may be NULL. */
exec_status model_mnist_load(const char *images_path, const char *labels_path, model_mnist_set **out);
void model_mnist_destroy(model_mnist_set *s);

/* ---- feature frames (frames.c) ------------------------------------------ */
/* Deep Speech style input: each of `classes` labels has a fixed prototype of
 * `features` values; an utterance is a random label sequence (no immediate
 * repeats), each label held for a random number of frames, each frame its
 * prototype plus Gaussian noise. Nearest-prototype decoding recovers the
 * labels, so CTC can learn them. */
typedef struct model_frames model_frames;
exec_status model_frames_create(int classes, int features, uint64_t seed, model_frames **out);
void model_frames_destroy(model_frames *f);
/* Fills one batch: frames [T, N, features*(2*context+1)] (time-major, each
 * frame with `context` neighbours on each side, zeros beyond the ends),
 * labels [N, max_labels] (padded with 0), label_len [N], seq_len [N] (= T).
 * Every utterance has between max_labels/2 and max_labels labels (at least 1
 * frame each); needs T >= max_labels. `step` picks the batch. */
void model_frames_fill(const model_frames *f, uint64_t step, int T, int N, int context, int max_labels, float *frames,
                       int32_t *labels, int32_t *label_len, int32_t *seq_len);
/* Nearest-prototype label of one frame's base features (for tests). */
int model_frames_nearest(const model_frames *f, const float *frame);
#endif
