/* breakout.c -- the Breakout-like game (see breakout.h). */
#include "models/breakout.h"

#include <string.h>

#define SUB 16 /* subpixels per pixel */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int model_breakout_row_points(int row)
{
    static const int pts[MODEL_BREAKOUT_ROWS] = { 7, 7, 4, 4, 1, 1 };
    return row >= 0 && row < MODEL_BREAKOUT_ROWS ? pts[row] : 0;
}

static void place_ball(model_breakout *b)
{
    b->launched = false;
    b->ball_x = (b->paddle_x + (MODEL_BREAKOUT_PADDLE_W - MODEL_BREAKOUT_BALL) / 2) * SUB;
    b->ball_y = (MODEL_BREAKOUT_PADDLE_Y - MODEL_BREAKOUT_BALL) * SUB;
    b->ball_vx = b->ball_vy = 0;
}

void model_breakout_reset(model_breakout *b, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->rng = seed ^ 0xb4eac0u;
    b->lives = MODEL_BREAKOUT_LIVES;
    b->paddle_x = (MODEL_BREAKOUT_WALL_X0 + MODEL_BREAKOUT_WALL_X1 - MODEL_BREAKOUT_PADDLE_W) / 2;
    memset(b->bricks, 1, sizeof b->bricks);
    b->bricks_left = MODEL_BREAKOUT_ROWS * MODEL_BREAKOUT_COLS;
    place_ball(b);
}

static void launch(model_breakout *b)
{
    static const int32_t vx[4] = { -24, -12, 12, 24 };
    b->launched = true;
    b->ball_vx = vx[next(&b->rng) % 4];
    b->ball_vy = -2 * SUB;
}

static bool overlap(int32_t ax, int32_t ay, int32_t aw, int32_t ah, int32_t bx, int32_t by, int32_t bw, int32_t bh)
{
    return ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah;
}

static int hit_brick(model_breakout *b)
{
    int32_t x = b->ball_x / SUB, y = b->ball_y / SUB;
    for (int r = 0; r < MODEL_BREAKOUT_ROWS; r++)
        for (int c = 0; c < MODEL_BREAKOUT_COLS; c++) {
            if (!b->bricks[r][c])
                continue;
            int32_t bx = MODEL_BREAKOUT_WALL_X0 + c * MODEL_BREAKOUT_BRICK_W;
            int32_t by = MODEL_BREAKOUT_BRICK_Y0 + r * MODEL_BREAKOUT_BRICK_H;
            if (overlap(x, y, MODEL_BREAKOUT_BALL, MODEL_BREAKOUT_BALL, bx, by, MODEL_BREAKOUT_BRICK_W,
                        MODEL_BREAKOUT_BRICK_H)) {
                b->bricks[r][c] = 0;
                b->bricks_left--;
                b->ball_vy = -b->ball_vy;
                return model_breakout_row_points(r);
            }
        }
    return 0;
}

int model_breakout_step(model_breakout *b, int action)
{
    if (b->over)
        return 0;
    b->ticks++;
    if (action == MODEL_BREAKOUT_RIGHT)
        b->paddle_x += 3;
    else if (action == MODEL_BREAKOUT_LEFT)
        b->paddle_x -= 3;
    if (b->paddle_x < MODEL_BREAKOUT_WALL_X0)
        b->paddle_x = MODEL_BREAKOUT_WALL_X0;
    if (b->paddle_x > MODEL_BREAKOUT_WALL_X1 - MODEL_BREAKOUT_PADDLE_W)
        b->paddle_x = MODEL_BREAKOUT_WALL_X1 - MODEL_BREAKOUT_PADDLE_W;
    int reward = 0;
    if (!b->launched) {
        place_ball(b);
        if (action == MODEL_BREAKOUT_FIRE)
            launch(b);
    } else {
        b->ball_x += b->ball_vx;
        b->ball_y += b->ball_vy;
        const int32_t lo = MODEL_BREAKOUT_WALL_X0 * SUB, hi = (MODEL_BREAKOUT_WALL_X1 - MODEL_BREAKOUT_BALL) * SUB;
        if (b->ball_x < lo) {
            b->ball_x = 2 * lo - b->ball_x;
            b->ball_vx = -b->ball_vx;
        } else if (b->ball_x > hi) {
            b->ball_x = 2 * hi - b->ball_x;
            b->ball_vx = -b->ball_vx;
        }
        if (b->ball_y < MODEL_BREAKOUT_WALL_Y0 * SUB) {
            b->ball_y = 2 * MODEL_BREAKOUT_WALL_Y0 * SUB - b->ball_y;
            b->ball_vy = -b->ball_vy;
        }
        reward = hit_brick(b);
        int32_t x = b->ball_x / SUB, y = b->ball_y / SUB;
        if (b->ball_vy > 0 && overlap(x, y, MODEL_BREAKOUT_BALL, MODEL_BREAKOUT_BALL, b->paddle_x,
                                      MODEL_BREAKOUT_PADDLE_Y, MODEL_BREAKOUT_PADDLE_W, MODEL_BREAKOUT_PADDLE_H)) {
            /* the bounce angle follows where the ball meets the paddle */
            int32_t off =
                (b->ball_x + MODEL_BREAKOUT_BALL * SUB / 2) - (b->paddle_x * SUB + MODEL_BREAKOUT_PADDLE_W * SUB / 2);
            int32_t vx = off / 3;
            if (vx > 36)
                vx = 36;
            if (vx < -36)
                vx = -36;
            if (vx == 0)
                vx = b->ball_vx >= 0 ? 6 : -6;
            b->ball_vx = vx;
            b->ball_vy = -b->ball_vy;
            b->ball_y = (MODEL_BREAKOUT_PADDLE_Y - MODEL_BREAKOUT_BALL) * SUB;
        } else if (y >= MODEL_BREAKOUT_SIZE) {
            b->lives--;
            if (b->lives <= 0)
                b->over = true;
            else
                place_ball(b);
        }
    }
    b->score += reward;
    if (b->bricks_left == 0 || b->ticks >= MODEL_BREAKOUT_MAX_TICKS)
        b->over = true;
    return reward;
}

static void fill(uint8_t *f, int x0, int y0, int w, int h, uint8_t v)
{
    for (int y = y0 < 0 ? 0 : y0; y < y0 + h && y < MODEL_BREAKOUT_SIZE; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x0 + w && x < MODEL_BREAKOUT_SIZE; x++)
            f[y * MODEL_BREAKOUT_SIZE + x] = v;
}

void model_breakout_render(const model_breakout *b, uint8_t *f)
{
    static const uint8_t row_grey[MODEL_BREAKOUT_ROWS] = { 200, 180, 160, 140, 120, 100 };
    memset(f, 0, MODEL_BREAKOUT_SIZE * MODEL_BREAKOUT_SIZE);
    fill(f, 0, 0, MODEL_BREAKOUT_SIZE, MODEL_BREAKOUT_WALL_Y0, 142);
    fill(f, 0, 0, MODEL_BREAKOUT_WALL_X0, MODEL_BREAKOUT_SIZE, 142);
    fill(f, MODEL_BREAKOUT_WALL_X1, 0, MODEL_BREAKOUT_SIZE - MODEL_BREAKOUT_WALL_X1, MODEL_BREAKOUT_SIZE, 142);
    for (int r = 0; r < MODEL_BREAKOUT_ROWS; r++)
        for (int c = 0; c < MODEL_BREAKOUT_COLS; c++)
            if (b->bricks[r][c])
                fill(f, MODEL_BREAKOUT_WALL_X0 + c * MODEL_BREAKOUT_BRICK_W,
                     MODEL_BREAKOUT_BRICK_Y0 + r * MODEL_BREAKOUT_BRICK_H, MODEL_BREAKOUT_BRICK_W - 1,
                     MODEL_BREAKOUT_BRICK_H - 1, row_grey[r]);
    fill(f, b->paddle_x, MODEL_BREAKOUT_PADDLE_Y, MODEL_BREAKOUT_PADDLE_W, MODEL_BREAKOUT_PADDLE_H, 200);
    if (!b->over)
        fill(f, b->ball_x / 16, b->ball_y / 16, MODEL_BREAKOUT_BALL, MODEL_BREAKOUT_BALL, 255);
    /* lives as dots in the top wall */
    for (int i = 0; i < b->lives; i++)
        fill(f, 70 + 2 * i, 1, 1, 2, 255);
}
