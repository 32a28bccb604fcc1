"""Figures for the suite: pure functions that take numbers and return a matplotlib Figure.

    attention    attention weights as maps, and what one trained head looks at past its training
    style        colours (one per position scheme: SCHEME_COLOURS), line looks, a new figure, show / save
    matrices     the encoding table, any small matrix, several on one scale, the similarity of rows
    curves       columns over positions, errors, accuracies, timings
    diagrams     the pipeline, the Transformer and stack + flatten, drawn for images/
    batching     subword pieces, the position ids of a padded batch, a packed row's mask, differences per scheme
    frequencies  wavelengths per base, each stretching rule's frequencies over plain RoPE's, loss
                 curves, accuracies over seeds

Every public name of these modules is importable from `posenc.plots` itself (each module's `__all__`
lists its own; this package lists none, so that no name is public in two places). The
explorers' own figures live with their explorer, in `posenc.explorers`.
"""

from .attention import attention_maps as attention_maps
from .attention import mask_maps as mask_maps
from .attention import previous_token_attention as previous_token_attention
from .batching import differences_figure as differences_figure
from .batching import packed_mask_figure as packed_mask_figure
from .batching import position_ids_figure as position_ids_figure
from .batching import subword_figure as subword_figure
from .curves import accuracy_by_length as accuracy_by_length
from .curves import angle_reached as angle_reached
from .curves import benchmark_figure as benchmark_figure
from .curves import error_by_position as error_by_position
from .curves import lines_figure as lines_figure
from .curves import pair_rotation as pair_rotation
from .curves import score_by_offset as score_by_offset
from .curves import sine_cosine_curves as sine_cosine_curves
from .diagrams import PIPELINE_STEPS as PIPELINE_STEPS
from .diagrams import interleave_diagram as interleave_diagram
from .diagrams import pipeline_diagram as pipeline_diagram
from .diagrams import transformer_diagram as transformer_diagram
from .frequencies import accuracy_over_seeds as accuracy_over_seeds
from .frequencies import frequency_ratios as frequency_ratios
from .frequencies import loss_curve as loss_curve
from .frequencies import wavelengths_by_base as wavelengths_by_base
from .matrices import encoding_heatmap as encoding_heatmap
from .matrices import lookup_figure as lookup_figure
from .matrices import matrices_figure as matrices_figure
from .matrices import matrix_figure as matrix_figure
from .matrices import one_hot_figure as one_hot_figure
from .matrices import similarity_figure as similarity_figure
from .matrices import update_similarity as update_similarity
from .style import COSINE_COLOUR as COSINE_COLOUR
from .style import DIVERGING as DIVERGING
from .style import DPI as DPI
from .style import LINE_STYLES as LINE_STYLES
from .style import MARKERS as MARKERS
from .style import OKABE_ITO as OKABE_ITO
from .style import SCHEME_COLOURS as SCHEME_COLOURS
from .style import SEQUENTIAL as SEQUENTIAL
from .style import SINE_COLOUR as SINE_COLOUR
from .style import artist as artist
from .style import line_style as line_style
from .style import new_figure as new_figure
from .style import png_bytes as png_bytes
from .style import save_png as save_png
from .style import shorten as shorten
from .style import show as show
