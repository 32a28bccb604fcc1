"""The build: each module is one job, run from the repository's root as `python -m tools.<module>` (the Makefile says
which target runs which).

    build_site        the offline site and slides (make site, make slides)
    draw_images       images/ from the package (make images)
    install_cell      the install cell at the top of every notebook (make notebooks)
    run_notebooks     execute notebooks in place: their stored outputs (make notebooks)
    student_edition   the learner's edition: a copy to hand out, or the learner's own (make student, make lab)
    sync_environment  environment.yml from requirements.lock (make lock)

web/ holds the site's JavaScript (npm) and templates, jupyterlab/ the JupyterLab settings `make` installs.
"""
