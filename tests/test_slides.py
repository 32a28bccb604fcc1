"""Every slide of every deck fits a 1280 x 720 screen, or scrolls (measured in headless Chromium)."""

# Walks every slide of the open deck (reveal.js comes through require.js, so it is taken from require's
# registry) and returns, for each, what does not fit: content taller than the deck that the slide cannot
# scroll to, and anything cut or spilling past the right edge that no box around it lets scroll.
MEASURE = r"""async () => {
    const defined = requirejs.s.contexts._.defined;
    const Reveal = defined[Object.keys(defined).find(key => /reveal\.js\/dist\/reveal(\.js)?$/.test(key))];
    Reveal.configure({transition: 'none', backgroundTransition: 'none'});
    const {width, height} = Reveal.getConfig();
    const frames = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const scrolls = (style, axis) => ['auto', 'scroll'].includes(style[axis]);
    const slides = [];
    for (const slide of Reveal.getSlides()) {
        const {h, v} = Reveal.getIndices(slide);
        Reveal.slide(h, v);
        await frames();
        const problems = [];
        const style = getComputedStyle(slide);
        const scale = Reveal.getScale();
        const tall = slide.scrollHeight > slide.clientHeight + 1 || slide.clientHeight > height + 1;
        const canScroll = scrolls(style, 'overflowY') && slide.clientHeight <= height + 1;
        if (tall && !canScroll) problems.push(`${slide.scrollHeight} px tall, the deck ${height}`);
        const edge = slide.getBoundingClientRect().left + width * scale;
        for (const node of slide.querySelectorAll('*')) {
            const box = node.getBoundingClientRect();
            if (box.width === 0 || box.height === 0) continue;
            let inScroller = false;
            for (let up = node.parentElement; up && up !== slide; up = up.parentElement) {
                if (scrolls(getComputedStyle(up), 'overflowX')) { inScroller = true; break; }
            }
            if (inScroller) continue;
            const own = getComputedStyle(node);
            if (box.right > edge + 2) problems.push(`${node.tagName}.${node.className} ends ${Math.round((box.right - edge) / scale)} px past the edge`);
            else if (own.overflowX === 'hidden' && node.scrollWidth > node.clientWidth + 2)
                problems.push(`${node.tagName}.${node.className} cuts ${node.scrollWidth - node.clientWidth} px`);
        }
        slides.push({slide: `${h}.${v || 0}`, height: slide.scrollHeight, scrolls: tall && canScroll,
                     problems: problems.slice(0, 3)});
    }
    return slides;
}"""
