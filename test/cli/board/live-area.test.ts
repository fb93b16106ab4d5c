import { describe, expect, it } from 'vitest';
import { fit, LiveArea } from '../../../src/cli/board/live-area.ts';
import { emulatedTty } from './fake-tty.ts';

const frame = (n: number, tag: string, width = 100): string[] =>
  Array.from({ length: n }, (_, i) => `${tag} row ${i} `.padEnd(width, '.'));

describe('the live area', () => {
  it('a frame taller than the terminal is cut to its height: no row is left behind on the next draw', async () => {
    const tty = emulatedTty(120, 10);
    const area = new LiveArea(tty.stream);
    area.draw(frame(30, 'A'));
    area.print('done 1');
    area.draw(frame(30, 'B'));
    area.close();
    const lines = await tty.lines();
    // before: a 30-line board in 10 rows left the rows that scrolled off in the scrollback
    expect(lines).toEqual(['done 1']);
  });

  it('lines wider than the terminal are cut one cell short, so none wraps into a row the next erase misses', async () => {
    const tty = emulatedTty(40, 10);
    const area = new LiveArea(tty.stream);
    area.draw(frame(3, 'A', 200));
    area.draw(frame(3, 'B', 200));
    expect((await tty.lines()).every((l) => l.startsWith('B row') && l.length === 39)).toBe(true);
    area.close();
    expect(await tty.lines()).toEqual([]);
  });

  it('after the terminal narrows (and re-flows the frame onto more rows), the next frame erases all of it', async () => {
    const tty = emulatedTty(120, 20);
    const area = new LiveArea(tty.stream);
    area.print('kept above');
    area.draw(frame(4, 'A', 110));
    tty.resize(50, 20); // each 110-cell row now takes three
    area.print('printed after the resize');
    area.draw(frame(4, 'B', 110));
    const lines = await tty.lines();
    expect(lines.filter((l) => l.includes('A row'))).toEqual([]);
    expect(lines.slice(0, 2)).toEqual(['kept above', 'printed after the resize']);
    expect(lines.filter((l) => l.startsWith('B row'))).toHaveLength(4);
  });

  it('fit cuts to display cells, wide characters included, and keeps the end of a path when asked', () => {
    expect(fit('abcdef', 4)).toBe('abc…');
    expect(fit('src/deep/path/file.ts', 10, 'start')).toBe('…h/file.ts');
    expect(fit('日本語テキスト', 6)).toBe('日本…');
    expect(fit('short', 10)).toBe('short');
  });
});
