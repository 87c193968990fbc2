import { useState } from 'react';
import { getFoodSources } from '../api/foods';
import { NUTRIENT_LABELS, NUTRIENT_KEYS } from '../lib/foods';
import { useResource } from '../lib/hooks';
import { fmtNumber } from '../lib/meals';
import { ResourceStatus } from './ui';
import './FoodTableAbout.css';

/**
 * "About the food table": its provenance and licence as the service reports them
 * (`GET /v1/foods/sources`, fetched when first opened), with how many foods know each nutrient.
 * docs/foods.md has the same table and how the table is rebuilt from its sources.
 */
export function FoodTableAbout() {
  const [opened, setOpened] = useState(false);
  return (
    <details className="about-foods" data-testid="about-foods" onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary>About the food table</summary>
      {opened ? <Sources /> : null}
    </details>
  );
}

function Sources() {
  const sources = useResource((signal) => getFoodSources(signal), []);
  const s = sources.data;
  if (!s) return <ResourceStatus resource={sources} />;
  return (
    <div className="about-foods__body">
      <p>
        {fmtNumber(s.food_count)} foods, on this computer: searching
        sends nothing anywhere. Nutrients are per 100 g of the edible part; a blank is unknown for that food, not 0.
        {s.custom_food_count ? ` Plus ${fmtNumber(s.custom_food_count)} of your own.` : ''}
      </p>
      <table className="about-foods__table">
        <caption className="visually-hidden">Sources of the food table</caption>
        <thead>
          <tr>
            <th scope="col">Release</th>
            <th scope="col">Gives</th>
            <th scope="col">Licence</th>
          </tr>
        </thead>
        <tbody>
          {s.sources.map((src) => (
            <tr key={src.id}>
              <th scope="row">
                {src.release}
                <span className="about-foods__via">via {src.obtained_from}</span>
              </th>
              <td>{src.provides}</td>
              <td>{src.licence}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="about-foods__known">
        Known for:{' '}
        {NUTRIENT_KEYS.filter((k) => s.values[k]).map((k, i) => {
          const v = s.values[k]!;
          const total = Object.values(v).reduce((a, b) => a + b, 0);
          const unknown = v.unknown ?? 0;
          return (
            <span key={k}>
              {i ? ' · ' : ''}
              {NUTRIENT_LABELS[k].label.toLowerCase()} {total ? fmtNumber(((total - unknown) / total) * 100) : 0} %
            </span>
          );
        })}{' '}
        of foods.
      </p>
      <p className="about-foods__credit">
        {s.licence} Credit: {s.credit}
      </p>
    </div>
  );
}
