/* breakout.h -- a Breakout-like game written for fathom (no ROMs): a paddle,
 * a ball and six rows of bricks, rendered to an 84x84 grayscale frame, the
 * size of the Nature DQN's input. Deterministic for a seed. Actions are ALE
 * Breakout's minimal set: NOOP, FIRE (launch the ball), RIGHT, LEFT. A brick
 * scores 1, 4 or 7 by row (bottom to top, as the Atari game); five lives; the
 * game ends when the last life is lost, the wall is cleared, or after
 * MODEL_BREAKOUT_MAX_TICKS ticks. Positions are in 1/16 pixel (integers), so
 * replays are exact on every machine. */
#ifndef FATHOM_MODELS_BREAKOUT_H
#define FATHOM_MODELS_BREAKOUT_H
#include <stdbool.h>
#include <stdint.h>

#define MODEL_BREAKOUT_SIZE 84
#define MODEL_BREAKOUT_ACTIONS 4
#define MODEL_BREAKOUT_ROWS 6
#define MODEL_BREAKOUT_COLS 10
#define MODEL_BREAKOUT_LIVES 5
#define MODEL_BREAKOUT_MAX_TICKS 20000

enum { MODEL_BREAKOUT_NOOP, MODEL_BREAKOUT_FIRE, MODEL_BREAKOUT_RIGHT, MODEL_BREAKOUT_LEFT };

/* geometry, in pixels */
#define MODEL_BREAKOUT_WALL_X0 2 /* play area x in [2, 82) */
#define MODEL_BREAKOUT_WALL_X1 82
#define MODEL_BREAKOUT_WALL_Y0 4   /* top wall: y < 4 */
#define MODEL_BREAKOUT_BRICK_Y0 14 /* first brick row's top */
#define MODEL_BREAKOUT_BRICK_W 8
#define MODEL_BREAKOUT_BRICK_H 3
#define MODEL_BREAKOUT_PADDLE_Y 76
#define MODEL_BREAKOUT_PADDLE_W 12
#define MODEL_BREAKOUT_PADDLE_H 2
#define MODEL_BREAKOUT_BALL 2

typedef struct model_breakout {
    uint64_t rng;
    int32_t paddle_x;         /* paddle's left edge, pixels */
    int32_t ball_x, ball_y;   /* ball's top-left corner, 1/16 pixel */
    int32_t ball_vx, ball_vy; /* 1/16 pixel per tick */
    bool launched;            /* false: the ball rests on the paddle */
    int lives;
    int score;
    int ticks;
    int bricks_left;
    bool over;
    uint8_t bricks[MODEL_BREAKOUT_ROWS][MODEL_BREAKOUT_COLS]; /* 1: present */
} model_breakout;

void model_breakout_reset(model_breakout *b, uint64_t seed);
/* One tick with an action (out-of-range actions act as NOOP); returns the
 * reward. A finished game ignores actions and returns 0. */
int model_breakout_step(model_breakout *b, int action);
/* 84x84 bytes, row-major. */
void model_breakout_render(const model_breakout *b, uint8_t *frame);
/* The points of a brick in a row (0 = top). */
int model_breakout_row_points(int row);
#endif
